// tcp_probe — one TCP exchange, for tests that check which addresses reach
// which: the network namespace hosts of tests/harness/netns_hosts.h.
//
//   tcp_probe serve ADDR PORT    listen on ADDR:PORT, print "ready", answer one
//                                line with "echo <line>", exit 0
//   tcp_probe ask ADDR PORT TEXT connect (once: ask after the server said
//                                ready), send TEXT, print the answer, exit 0
//
// Every step is bounded (10 s in all, SIGALRM); a failure prints what failed
// and exits 1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "tcp_probe: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

sockaddr_in parse(const char* addr, const char* port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
    errno = EINVAL;
    fail(std::string("not an IPv4 address: ") + addr);
  }
  return sa;
}

std::string read_line(int fd) {
  std::string line;
  char c = 0;
  while (::read(fd, &c, 1) == 1 && c != '\n') line += c;
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  ::alarm(10);
  if (argc == 4 && std::strcmp(argv[1], "serve") == 0) {
    const sockaddr_in sa = parse(argv[2], argv[3]);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) fail("bind");
    if (::listen(fd, 1) != 0) fail("listen");
    std::printf("ready\n");
    std::fflush(stdout);
    const int c = ::accept(fd, nullptr, nullptr);
    if (c < 0) fail("accept");
    const std::string answer = "echo " + read_line(c) + "\n";
    if (::write(c, answer.data(), answer.size()) != static_cast<ssize_t>(answer.size()))
      fail("write");
    ::close(c);
    return 0;
  }
  if (argc == 5 && std::strcmp(argv[1], "ask") == 0) {
    const sockaddr_in sa = parse(argv[2], argv[3]);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0)
      fail(std::string("connect to ") + argv[2] + ":" + argv[3]);
    const std::string line = std::string(argv[4]) + "\n";
    if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) fail("write");
    std::printf("%s\n", read_line(fd).c_str());
    return 0;
  }
  std::fprintf(stderr, "usage: tcp_probe serve ADDR PORT | ask ADDR PORT TEXT\n");
  return 2;
}
