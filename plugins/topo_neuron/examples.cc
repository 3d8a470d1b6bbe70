#include "examples.h"

#include "synthesize.h"

namespace nccom::topo_neuron {

const std::vector<ExampleSpec>& exampleSpecs() {
  static const std::vector<ExampleSpec> specs = {
      {"trn1.xml", Variant::Trn1, 16, 1},
      {"trn1n.xml", Variant::Trn1n, 16, 1},
      {"inf2.xml", Variant::Inf2, 12, 1},
      {"trn2.xml", Variant::Trn2, 16, 2},
      {"trn2-ultraserver.xml", Variant::Trn2UltraServer, 16, 2},
      {"trn3.xml", Variant::Trn3, 16, 2},
      {"trn3-switch-v1.xml", Variant::Trn3SwitchV1, 16, 2},
      {"emu-8.xml", Variant::Emu, 8, 1},
  };
  return specs;
}

Result<std::string> exampleText(const ExampleSpec& spec) {
  DescribeOptions o;
  o.instanceDevices = spec.devices;
  o.lnc = spec.lnc;
  auto d = describePlatform(spec.variant, o);
  if (!d) return d.take_error();
  return synthesizeSystemXml(*d, fullShare(*d, spec.devices), false);
}

}  // namespace nccom::topo_neuron
