// SocketAddress — an IPv4 or IPv6 endpoint, and its 28-byte wire form (the
// inherited `socketAddress` union: sockaddr_in / sockaddr_in6), which is what
// travels in the unique id, in the rank→root record and in the address table.
#pragma once

#include <nccom/util/result.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace nccom::bootstrap {

inline constexpr std::size_t kWireAddressBytes = 28;

class SocketAddress {
 public:
  SocketAddress() = default;  // AF_UNSPEC: "no address"

  // "<ipv4>:<port>", "[<ipv6>]:<port>" or "<hostname>:<port>" (resolved with
  // getaddrinfo; the first IPv4/IPv6 result). Port 1..65535.
  static Result<SocketAddress> parse(std::string_view text);
  static SocketAddress from_sockaddr(const sockaddr* sa, socklen_t len);

  // The 28-byte wire form: family, port and address in network order, the
  // rest zero. decode() validates (family, length) and never trusts the bytes.
  void encode(uint8_t out[kWireAddressBytes]) const;
  static Result<SocketAddress> decode(const uint8_t* bytes, std::size_t length);

  bool valid() const { return family() == AF_INET || family() == AF_INET6; }
  int family() const { return storage_.ss_family; }
  uint16_t port() const;
  void set_port(uint16_t port);
  bool is_loopback() const;

  const sockaddr* sa() const { return reinterpret_cast<const sockaddr*>(&storage_); }
  socklen_t length() const;

  // "127.0.0.1:5000", "[::1]:5000"; "<none>" when invalid.
  std::string to_string() const;
  // The address without the port: "127.0.0.1", "::1".
  std::string host_string() const;

  friend bool operator==(const SocketAddress& a, const SocketAddress& b);

 private:
  sockaddr_storage storage_{};
};

}  // namespace nccom::bootstrap
