// Net-plugin pass-through exports (abi.md §3 slots 21–36, §8).
// Implemented by the net-plugin issue (#5).
#include "abi/export.h"

using nccom::abi::not_implemented;

NCCOM_API NRT_STATUS neuronInitNet(char* root_comm_id) {
  return not_implemented("neuronInitNet", 5);
}

NCCOM_API NRT_STATUS neuronFiniPlugin(void) {
  return not_implemented("neuronFiniPlugin", 5);
}

NCCOM_API NRT_STATUS neuronGetOFIHandle(void** out) {
  return not_implemented("neuronGetOFIHandle", 5);
}

NCCOM_API NRT_STATUS neuronNetListen(int dev, void* handle, void** listen_comm) {
  return not_implemented("neuronNetListen", 5);
}

NCCOM_API NRT_STATUS neuronNetConnect(int dev, void* handle, void** send_comm) {
  return not_implemented("neuronNetConnect", 5);
}

NCCOM_API NRT_STATUS neuronNetAccept(void* listen_comm, void** recv_comm) {
  return not_implemented("neuronNetAccept", 5);
}

NCCOM_API NRT_STATUS neuronNetRegMrOG(void* comm, void* data, size_t size, int type,
                                      void** mhandle) {
  return not_implemented("neuronNetRegMrOG", 5);
}

NCCOM_API NRT_STATUS neuronNetDeregMrOG(void* comm, void* mhandle) {
  return not_implemented("neuronNetDeregMrOG", 5);
}

NCCOM_API NRT_STATUS neuronNetGetMrKey(void* mhandle, uint64_t* key_out) {
  return not_implemented("neuronNetGetMrKey", 5);
}

NCCOM_API NRT_STATUS neuronNetIsend(void* send_comm, void* data, int size, void* mhandle,
                                    void** request) {
  return not_implemented("neuronNetIsend", 5);
}

NCCOM_API NRT_STATUS neuronNetIrecv(void* recv_comm, void* data, int size, void* mhandle,
                                    void** request) {
  return not_implemented("neuronNetIrecv", 5);
}

NCCOM_API NRT_STATUS neuronNetIflush(void* recv_comm, void* data, int size, void* mhandle,
                                     void** request) {
  return not_implemented("neuronNetIflush", 5);
}

NCCOM_API NRT_STATUS neuronNetTest(void* request, int* done, int* size) {
  return not_implemented("neuronNetTest", 5);
}

NCCOM_API NRT_STATUS neuronNetCloseSend(void* send_comm) {
  return not_implemented("neuronNetCloseSend", 5);
}

NCCOM_API NRT_STATUS neuronNetCloseRecv(void* recv_comm) {
  return not_implemented("neuronNetCloseRecv", 5);
}

NCCOM_API NRT_STATUS neuronNetCloseListen(void* listen_comm) {
  return not_implemented("neuronNetCloseListen", 5);
}
