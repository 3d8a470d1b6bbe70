/*
 * nccom/nccl_ptr.h — memory-type bits of regMr, shared by the runtime
 * boundary (nrt_abi.h) and the net-plugin headers (net_v*.h).
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_NCCL_PTR_H
#define NCCOM_NCCL_PTR_H

typedef enum {
  NCCL_PTR_HOST = 0x1,
  NCCL_PTR_CUDA = 0x2, /* never advertised on Neuron */
  NCCL_PTR_NEURON =
      0x4 /* Neuron device memory (dma-buf backed); NVIDIA's header calls this bit DMABUF */
} nccl_ptr_type;

#endif /* NCCOM_NCCL_PTR_H */
