// A thread's body, run so that an exception never reaches the thread's top
// (where std::terminate would end the runtime's whole process): it is
// logged as a WARN naming the thread and what it means, and the thread ends.
#pragma once

#include <exception>
#include <new>

namespace nccom::log {

// The WARN line of a thread ended by an exception. Never throws.
void thread_stopped(const char* thread, const char* consequence, const std::exception* e,
                    bool out_of_memory) noexcept;

// Runs `body`; false when an exception ended it (after the WARN).
template <class Body>
bool run_thread_body(const char* thread, const char* consequence, Body&& body) noexcept {
  try {
    body();
    return true;
  } catch (const std::bad_alloc& e) {
    thread_stopped(thread, consequence, &e, true);
  } catch (const std::exception& e) {
    thread_stopped(thread, consequence, &e, false);
  } catch (...) {
    thread_stopped(thread, consequence, nullptr, false);
  }
  return false;
}

}  // namespace nccom::log
