#include "decode/guarded_io.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

extern "C" {
#include <libavformat/avio.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
}

namespace sightflow::decode {

// How often a wait on the host looks at the interrupt check (abort answers within ~100 ms overall).
constexpr auto kPoll = std::chrono::milliseconds(20);
// The AVIOContext's own buffer.
constexpr int kAvioBuffer = 64 * 1024;
// A forward seek up to this far reads on instead of asking the host for a new ranged response.
constexpr int64_t kSkipInsteadOfSeek = 512 * 1024;

struct NetStream {
  int64_t id = 0;
  std::mutex mu;
  std::condition_variable cv;
  bool headed = false;
  NetHead head;
  std::deque<std::vector<uint8_t>> chunks;
  size_t front_pos = 0;
  size_t buffered = 0;
  bool eof = false;
  bool failed = false;
  bool fatal = false;
  bool host_waiting = false;  // push answered "pause": send More once the queue drained
  bool dropped = false;
};

// The AVIOContext's opaque: one resource, read through one host request at a time (a seek starts another).
struct NetReader {
  GuardedIo* io = nullptr;
  std::string url;
  std::shared_ptr<NetStream> stream;
  int64_t pos = 0;
  int64_t size = -1;
  int64_t end = -1;
  bool seekable = false;
  bool reopen = false;
  int64_t skip = 0;

  static int read_packet(void* opaque, uint8_t* buf, int size);
  static int64_t seek(void* opaque, int64_t offset, int whence);
};

GuardedIo::GuardedIo(std::function<void(const NetRequest&)> post, size_t max_buffered)
    : post_(std::move(post)), max_buffered_(max_buffered) {}

GuardedIo::~GuardedIo() {
  std::map<int64_t, std::shared_ptr<NetStream>> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    left.swap(streams_);
  }
  for (auto& [id, s] : left) post_(NetRequest{NetRequest::Close, id, {}, 0, -1});
}

std::shared_ptr<NetStream> GuardedIo::find(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second;
}

void GuardedIo::record(const std::string& code, const std::string& message, bool fatal) {
  std::lock_guard<std::mutex> lock(mu_);
  // A fatal failure replaces an earlier ordinary one: it is the reason the decode stops.
  if (failure_.code.empty() || (fatal && !fatal_.load())) failure_ = Error{code, message};
  if (fatal) fatal_.store(true);
}

Error GuardedIo::failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return failure_;
}

void GuardedIo::head(int64_t id, const NetHead& head) {
  auto s = find(id);
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  s->head = head;
  s->headed = true;
  s->cv.notify_all();
}

int GuardedIo::push(int64_t id, const uint8_t* data, size_t n) {
  auto s = find(id);
  if (!s) return -1;
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->dropped) return -1;
  if (n > 0) {
    s->chunks.emplace_back(data, data + n);
    s->buffered += n;
  }
  s->cv.notify_all();
  if (s->buffered >= max_buffered_) {
    s->host_waiting = true;
    return 1;
  }
  return 0;
}

void GuardedIo::end(int64_t id) {
  auto s = find(id);
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  s->eof = true;
  s->cv.notify_all();
}

void GuardedIo::fail(int64_t id, const std::string& code, const std::string& message, bool fatal) {
  record(code, message, fatal);
  auto s = find(id);
  if (!s) return;
  std::lock_guard<std::mutex> lock(s->mu);
  s->failed = true;
  s->fatal = fatal;
  s->cv.notify_all();
}

std::shared_ptr<NetStream> GuardedIo::start(const std::string& url, int64_t offset, int64_t end) {
  auto s = std::make_shared<NetStream>();
  {
    std::lock_guard<std::mutex> lock(mu_);
    s->id = next_id_++;
    streams_[s->id] = s;
  }
  post_(NetRequest{NetRequest::Open, s->id, url, offset, end});
  return s;
}

void GuardedIo::drop(const std::shared_ptr<NetStream>& s) {
  if (!s) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    streams_.erase(s->id);
  }
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->dropped = true;
    s->chunks.clear();
    s->buffered = 0;
  }
  post_(NetRequest{NetRequest::Close, s->id, {}, 0, -1});
}

int GuardedIo::wait_head(const std::shared_ptr<NetStream>& s, NetHead* head) {
  std::unique_lock<std::mutex> lock(s->mu);
  for (;;) {
    if (s->failed) return s->fatal ? AVERROR_EXIT : AVERROR(EIO);
    if (s->headed) {
      if (head) *head = s->head;
      return 0;
    }
    if (s->eof) return AVERROR(EIO);
    lock.unlock();
    const bool stop = interrupted_ && interrupted_();
    lock.lock();
    if (stop) return AVERROR_EXIT;
    s->cv.wait_for(lock, kPoll);
  }
}

int GuardedIo::read(NetStream& s, uint8_t* buf, int size) {
  bool more = false;
  int n = 0;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    for (;;) {
      if (s.buffered > 0) {
        while (n < size && !s.chunks.empty()) {
          auto& front = s.chunks.front();
          const size_t take = std::min(front.size() - s.front_pos, static_cast<size_t>(size - n));
          std::memcpy(buf + n, front.data() + s.front_pos, take);
          n += static_cast<int>(take);
          s.front_pos += take;
          s.buffered -= take;
          if (s.front_pos == front.size()) {
            s.chunks.pop_front();
            s.front_pos = 0;
          }
        }
        if (s.host_waiting && s.buffered <= max_buffered_ / 2) {
          s.host_waiting = false;
          more = true;
        }
        break;
      }
      if (s.failed) return s.fatal ? AVERROR_EXIT : AVERROR(EIO);
      if (s.eof) return AVERROR_EOF;
      lock.unlock();
      const bool stop = interrupted_ && interrupted_();
      lock.lock();
      if (stop) return AVERROR_EXIT;
      s.cv.wait_for(lock, kPoll);
    }
  }
  if (more) post_(NetRequest{NetRequest::More, s.id, {}, 0, -1});
  return n;
}

int NetReader::read_packet(void* opaque, uint8_t* buf, int size) {
  auto* r = static_cast<NetReader*>(opaque);
  if (r->reopen) {
    r->io->drop(r->stream);
    r->stream = r->io->start(r->url, r->pos, r->end);
    r->reopen = false;
    const int ret = r->io->wait_head(r->stream, nullptr);
    if (ret < 0) return ret;
  }
  while (r->skip > 0) {
    uint8_t scratch[16 * 1024];
    const int ret = r->io->read(*r->stream, scratch, static_cast<int>(std::min<int64_t>(r->skip, sizeof scratch)));
    if (ret < 0) return ret;
    r->skip -= ret;
  }
  const int ret = r->io->read(*r->stream, buf, size);
  if (ret > 0) r->pos += ret;
  return ret;
}

int64_t NetReader::seek(void* opaque, int64_t offset, int whence) {
  auto* r = static_cast<NetReader*>(opaque);
  whence &= ~AVSEEK_FORCE;
  if (whence == AVSEEK_SIZE) return r->size >= 0 ? r->size : AVERROR(ENOSYS);
  if (!r->seekable) return AVERROR(ESPIPE);
  const int64_t current = r->pos + r->skip;
  int64_t target;
  if (whence == SEEK_SET) target = offset;
  else if (whence == SEEK_CUR) target = current + offset;
  else if (whence == SEEK_END && r->size >= 0) target = r->size + offset;
  else return AVERROR(EINVAL);
  if (target < 0 || (r->size >= 0 && target > r->size)) return AVERROR(EINVAL);
  if (target == current) return target;
  if (!r->reopen && target > current && target - current <= kSkipInsteadOfSeek) {
    r->skip = target - r->pos;
    return target;
  }
  // A new ranged request, started lazily: demuxers often seek several times before they read.
  r->pos = target;
  r->skip = 0;
  r->reopen = true;
  return target;
}

int GuardedIo::open(const std::string& url, int64_t offset, int64_t end, AVIOContext** pb, NetHead* head_out) {
  auto* r = new NetReader();
  r->io = this;
  r->url = url;
  r->pos = offset;
  r->end = end;
  r->stream = start(url, offset, end);
  NetHead head;
  int ret = wait_head(r->stream, &head);
  if (ret < 0) {
    drop(r->stream);
    delete r;
    return ret;
  }
  // Ranged re-requests go to the URL the redirects ended at (the host checks it again anyway).
  if (!head.final_url.empty()) r->url = head.final_url;
  r->size = head.size;
  r->seekable = head.seekable && head.size >= 0;
  auto* buffer = static_cast<unsigned char*>(av_malloc(kAvioBuffer));
  AVIOContext* ctx = buffer ? avio_alloc_context(buffer, kAvioBuffer, 0, r, &NetReader::read_packet, nullptr, &NetReader::seek) : nullptr;
  if (!ctx) {
    av_free(buffer);
    drop(r->stream);
    delete r;
    return AVERROR(ENOMEM);
  }
  ctx->seekable = r->seekable ? AVIO_SEEKABLE_NORMAL : 0;
  *pb = ctx;
  if (head_out) *head_out = head;
  return 0;
}

void GuardedIo::close(AVIOContext* pb) {
  if (!pb) return;
  auto* r = static_cast<NetReader*>(pb->opaque);
  if (r) {
    drop(r->stream);
    delete r;
  }
  av_freep(&pb->buffer);
  avio_context_free(&pb);
}

}  // namespace sightflow::decode
