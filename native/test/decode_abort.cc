// abort() from another thread while open() is blocked on a loopback server that accepts and never
// answers, and the open timeout on the same server: both return promptly and free everything (the
// sanitizer build checks the freeing).
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "decode/video_decoder.h"

using namespace sightflow::decode;
using Clock = std::chrono::steady_clock;

namespace {

// Accepts connections and holds them open without a byte of response.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(fd_, 8) == 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = accept(fd_, nullptr, nullptr);
        if (c < 0 || stop_.load()) {
          if (c >= 0) ::close(c);
          return;
        }
        clients_.push_back(c);
      }
    });
  }
  ~SilentServer() {
    stop_.store(true);
    shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int c : clients_) ::close(c);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/video.mp4"; }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::vector<int> clients_;
};

[[maybe_unused]] double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

TEST_CASE("abort() from another thread stops a blocked open within 1 s") {
  SilentServer server;
  VideoDecoder d;
  Options o;
  o.input = server.url();
  o.open_timeout_ms = 30000;
  Clock::time_point aborted_at;
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    aborted_at = Clock::now();
    d.abort();
  });
  const bool ok = d.open(o);
  const auto returned_at = Clock::now();
  aborter.join();
  const double after_abort = std::chrono::duration<double>(returned_at - aborted_at).count();
  CHECK_FALSE(ok);
  CHECK(d.error().code == "aborted");
  CHECK(after_abort < 1.0);
}

TEST_CASE("a silent server fails open with code timeout after open_timeout_ms") {
  SilentServer server;
  VideoDecoder d;
  Options o;
  o.input = server.url();
  o.open_timeout_ms = 400;
  const auto t0 = Clock::now();
  CHECK_FALSE(d.open(o));
  CHECK(d.error().code == "timeout");
  const double took = seconds_since(t0);
  CHECK(took >= 0.35);
  CHECK(took < 3.0);
}
