#include "bootstrap/socket_address.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <cstring>

namespace nccom::bootstrap {
namespace {

Result<uint16_t> parse_port(std::string_view text, std::string_view whole) {
  if (text.empty() || text.size() > 5) {
    return make_error(NRT_INVALID, "bad port in \"" + std::string(whole) + "\"");
  }
  uint32_t port = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return make_error(NRT_INVALID, "bad port in \"" + std::string(whole) + "\"");
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port == 0 || port > 65535) {
    return make_error(NRT_INVALID, "port out of range (1-65535) in \"" + std::string(whole) + "\"");
  }
  return static_cast<uint16_t>(port);
}

}  // namespace

Result<SocketAddress> SocketAddress::parse(std::string_view text) {
  const std::string whole(text);
  std::string host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return make_error(NRT_INVALID, "expected [<ipv6>]:<port>, got \"" + whole + "\"");
    }
    host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || text.find(':') != colon) {
      return make_error(
          NRT_INVALID,
          "expected <ipv4>:<port>, [<ipv6>]:<port> or <hostname>:<port>, got \"" + whole + "\"");
    }
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  auto port = parse_port(port_text, text);
  if (!port) return port.take_error();

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return make_error(NRT_INVALID,
                      "cannot resolve \"" + host + "\" in \"" + whole + "\": " + gai_strerror(rc));
  }
  SocketAddress result;
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6) {
      result = from_sockaddr(ai->ai_addr, ai->ai_addrlen);
      break;
    }
  }
  freeaddrinfo(found);
  if (!result.valid()) {
    return make_error(NRT_INVALID, "\"" + host + "\" has no IPv4 or IPv6 address");
  }
  result.set_port(*port);
  return result;
}

SocketAddress SocketAddress::from_sockaddr(const sockaddr* sa, socklen_t len) {
  SocketAddress result;
  if (sa == nullptr) return result;
  if (sa->sa_family == AF_INET && len >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    std::memcpy(&result.storage_, sa, sizeof(sockaddr_in));
  } else if (sa->sa_family == AF_INET6 && len >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    std::memcpy(&result.storage_, sa, sizeof(sockaddr_in6));
  }
  return result;
}

// Wire form: exactly the bytes of sockaddr_in (16) or sockaddr_in6 (28), the
// rest zero. Linux's layouts are the same on every x86-64 host, which is what
// the inherited 28-byte union carried.
void SocketAddress::encode(uint8_t out[kWireAddressBytes]) const {
  std::memset(out, 0, kWireAddressBytes);
  if (family() == AF_INET) std::memcpy(out, &storage_, sizeof(sockaddr_in));
  if (family() == AF_INET6) std::memcpy(out, &storage_, sizeof(sockaddr_in6));
}

Result<SocketAddress> SocketAddress::decode(const uint8_t* bytes, std::size_t length) {
  if (bytes == nullptr || length < kWireAddressBytes) {
    return make_error(NRT_INVALID,
                      "socket address truncated: " + std::to_string(length) + " of 28 bytes");
  }
  sa_family_t family = 0;
  std::memcpy(&family, bytes, sizeof family);
  SocketAddress result;
  if (family == AF_INET) {
    for (std::size_t i = sizeof(sockaddr_in); i < kWireAddressBytes; ++i) {
      if (bytes[i] != 0)
        return make_error(NRT_INVALID, "socket address: IPv4 with non-zero padding");
    }
    std::memcpy(&result.storage_, bytes, sizeof(sockaddr_in));
  } else if (family == AF_INET6) {
    std::memcpy(&result.storage_, bytes, sizeof(sockaddr_in6));
  } else {
    return make_error(NRT_INVALID, "socket address: unknown family " + std::to_string(family));
  }
  if (result.port() == 0) return make_error(NRT_INVALID, "socket address: port 0");
  return result;
}

uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_port);
  return 0;
}

void SocketAddress::set_port(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage_)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage_)->sin6_port = htons(port);
}

bool SocketAddress::is_loopback() const {
  if (family() == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr.s_addr) >> 24) == 127;
  }
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr);
  }
  return false;
}

socklen_t SocketAddress::length() const {
  if (family() == AF_INET) return sizeof(sockaddr_in);
  if (family() == AF_INET6) return sizeof(sockaddr_in6);
  return 0;
}

std::string SocketAddress::host_string() const {
  char text[INET6_ADDRSTRLEN] = {0};
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage_)->sin_addr, text,
              sizeof text);
  } else if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage_)->sin6_addr, text,
              sizeof text);
  } else {
    return "<none>";
  }
  return text;
}

std::string SocketAddress::to_string() const {
  if (family() == AF_INET) return host_string() + ":" + std::to_string(port());
  if (family() == AF_INET6) return "[" + host_string() + "]:" + std::to_string(port());
  return "<none>";
}

bool operator==(const SocketAddress& a, const SocketAddress& b) {
  return a.length() == b.length() && std::memcmp(&a.storage_, &b.storage_, a.length()) == 0;
}

}  // namespace nccom::bootstrap
