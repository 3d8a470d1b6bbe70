#include "net/request_budget.h"

namespace nccom::net {

bool RequestBudget::reserve(void* comm) {
  std::lock_guard lock(mu_);
  int& n = in_flight_[comm];
  if (n >= limit_) return false;
  ++n;
  return true;
}

void RequestBudget::unreserve(void* comm) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(comm);
  if (it != in_flight_.end() && --it->second <= 0) in_flight_.erase(it);
}

void RequestBudget::bind(void* request, void* comm) {
  std::lock_guard lock(mu_);
  owner_[request] = comm;
}

void RequestBudget::finished(void* request) {
  std::lock_guard lock(mu_);
  auto it = owner_.find(request);
  if (it == owner_.end()) return;
  auto c = in_flight_.find(it->second);
  if (c != in_flight_.end() && --c->second <= 0) in_flight_.erase(c);
  owner_.erase(it);
}

void RequestBudget::closed(void* comm) {
  std::lock_guard lock(mu_);
  for (auto it = owner_.begin(); it != owner_.end();) {
    it = it->second == comm ? owner_.erase(it) : std::next(it);
  }
  in_flight_.erase(comm);
}

int RequestBudget::in_flight(void* comm) {
  std::lock_guard lock(mu_);
  auto it = in_flight_.find(comm);
  return it == in_flight_.end() ? 0 : it->second;
}

}  // namespace nccom::net
