// suite.h — the GoogleTest suite name of these tests: EngineDType against
// the library as shipped (AVX2 or baseline kernels, chosen at load time),
// EngineDTypeBaseline against a copy built without the AVX2 kernels, so both
// instruction sets are tested on an AVX2 machine.
#pragma once
#ifndef ENGINE_DTYPE_SUITE
#define ENGINE_DTYPE_SUITE EngineDType
#endif
