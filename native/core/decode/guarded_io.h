// Network input through the host: FFmpeg never resolves, connects or follows a redirect by itself. Every URL
// the demuxer opens (the input, a ranged re-request after a seek, an HLS playlist, segment or key) becomes a
// request to the host (the binding forwards it to JS, which applies the URL policy and fetches from the
// addresses it checked); the host feeds the response into a bounded per-request queue that an AVIOContext
// reads from. Waits poll the decoder's interrupt check every 20 ms, so abort and the open/read deadlines keep
// working while a request waits on the host, and a host that never answers cannot hang the demux thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "decode/options.h"

struct AVIOContext;

namespace sightflow::decode {

// What the demuxer asks the host. Open: fetch `url` from byte `offset` (to `end`, exclusive; -1 = to the end)
// into request `id`. More: the queue of `id` drained, resume sending. Close: drop `id` and its connection.
struct NetRequest {
  enum Kind { Open, More, Close } kind = Open;
  int64_t id = 0;
  std::string url;
  int64_t offset = 0;
  int64_t end = -1;
};

// The response head the host reports once it has a 2xx answer (after redirects it checked itself).
struct NetHead {
  int64_t size = -1;       // total size of the resource, -1 when unknown
  bool seekable = false;   // the host can serve byte ranges
  std::string final_url;   // the URL after redirects
};

struct NetStream;

class GuardedIo {
 public:
  // `post` must not block (the binding queues it for the JS thread). `max_buffered`: bytes queued per request
  // before the host is asked to wait (backpressure).
  explicit GuardedIo(std::function<void(const NetRequest&)> post, size_t max_buffered = 4u << 20);
  ~GuardedIo();
  GuardedIo(const GuardedIo&) = delete;
  GuardedIo& operator=(const GuardedIo&) = delete;

  // Host side, any thread. push: 0 = queued, 1 = queued but over the high mark (pause until More),
  // -1 = the request is gone (drop the connection).
  void head(int64_t id, const NetHead& head);
  int push(int64_t id, const uint8_t* data, size_t n);
  void end(int64_t id);
  // A failed request. `fatal` (a URL the policy refused, a source over a limit) also stops the whole decode
  // through fatal(), because a demuxer such as HLS skips a segment that does not open.
  void fail(int64_t id, const std::string& code, const std::string& message, bool fatal);

  // Demuxer side: the decoder's interrupt check (abort, deadline), polled while waiting on the host.
  void set_interrupt(std::function<bool()> interrupted) { interrupted_ = std::move(interrupted); }
  // Opens `url` (from `offset`, to `end` exclusive or -1) as a readable AVIOContext; blocks until the host
  // answered. 0 or a negative AVERROR. `head_out` (optional) receives the response head.
  int open(const std::string& url, int64_t offset, int64_t end, AVIOContext** pb, NetHead* head_out = nullptr);
  // Frees an AVIOContext from open() and tells the host to drop its connection. Null is fine.
  void close(AVIOContext* pb);

  bool fatal() const { return fatal_.load(); }
  // The first failure the host reported (code empty when none).
  Error failure() const;

 private:
  friend struct NetReader;
  std::shared_ptr<NetStream> start(const std::string& url, int64_t offset, int64_t end);
  int wait_head(const std::shared_ptr<NetStream>& s, NetHead* head);
  int read(NetStream& s, uint8_t* buf, int size);
  void drop(const std::shared_ptr<NetStream>& s);
  std::shared_ptr<NetStream> find(int64_t id);
  void record(const std::string& code, const std::string& message, bool fatal);

  std::function<void(const NetRequest&)> post_;
  std::function<bool()> interrupted_;
  const size_t max_buffered_;
  mutable std::mutex mu_;  // streams_, next_id_, failure_
  std::map<int64_t, std::shared_ptr<NetStream>> streams_;
  int64_t next_id_ = 1;
  Error failure_;
  std::atomic<bool> fatal_{false};
};

}  // namespace sightflow::decode
