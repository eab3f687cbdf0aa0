// The fan-out bench's live readers in one process of plain C (bench/suites/fanout.ts compiles and runs it): N
// HTTP/1.1 connections to GET /v1/video/tasks/ID/stream on loopback, one epoll loop, the chunked body decoded,
// every byte compared with what the first reader to reach that offset got, and each event's end ("\n\n")
// timed. The readers stand for clients on other machines, so what they cost the shared cores should be as
// little as a reader can cost: in Node.js the same readers took 5.5 s of CPU for 1000 readers of a 179-frame
// task, about as much as the server's whole fan-out.
//
//   sse-readers PORT KEY TASK_ID N STALL REF_FILE
//
// The first STALL readers stop reading after their first bytes until a line arrives on stdin. At the end the
// reference bytes go to REF_FILE and one JSON line to stdout: {"cpu_s", "readers": [{bytes, same, done,
// stalled, head, times}]} with times (and head, when the response head was complete) in milliseconds since the epoch.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  int fd;
  int header_done, finished, closed, stalled, paused, same;
  char head[4096];
  size_t head_len;
  long left;  // bytes left in the current chunk; -1 while reading a size line
  char line[32];
  size_t line_len;
  int skip_crlf;
  size_t bytes;
  unsigned char last_byte;
  long long head_ms;
  long long *times;
  size_t n_times, cap_times;
} Reader;

static unsigned char *ref;
static size_t ref_len, ref_cap;

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void die(const char *what) {
  perror(what);
  exit(1);
}

// Compares b (received at offset) with the reference; appends what goes past its end. 0 on a difference.
static int check(size_t offset, const unsigned char *b, size_t n) {
  if (offset > ref_len) return 0;
  size_t overlap = ref_len - offset < n ? ref_len - offset : n;
  if (overlap > 0 && memcmp(ref + offset, b, overlap) != 0) return 0;
  if (n > overlap) {
    size_t need = offset + n;
    if (need > ref_cap) {
      ref_cap = need > ref_cap * 2 ? need : ref_cap * 2;
      ref = realloc(ref, ref_cap);
      if (!ref) die("realloc");
    }
    memcpy(ref + ref_len, b + overlap, n - overlap);
    ref_len = need;
  }
  return 1;
}

static void mark(Reader *r, long long t) {
  if (r->n_times == r->cap_times) {
    r->cap_times = r->cap_times ? r->cap_times * 2 : 256;
    r->times = realloc(r->times, r->cap_times * sizeof(long long));
    if (!r->times) die("realloc");
  }
  r->times[r->n_times++] = t;
}

static void payload(Reader *r, const unsigned char *b, size_t n) {
  if (n == 0) return;
  if (r->same) r->same = check(r->bytes, b, n);
  r->bytes += n;
  long long t = now_ms();
  if (r->last_byte == '\n' && b[0] == '\n') mark(r, t);
  for (size_t i = 0; i + 1 < n;) {
    const unsigned char *p = memmem(b + i, n - i, "\n\n", 2);
    if (!p) break;
    mark(r, t);
    i = (size_t)(p - b) + 2;
  }
  r->last_byte = b[n - 1];
}

static void feed(Reader *r, const unsigned char *d, size_t n) {
  size_t i = 0;
  while (i < n && !r->finished) {
    if (r->skip_crlf > 0) { r->skip_crlf--; i++; continue; }
    if (r->left < 0) {
      unsigned char c = d[i++];
      if (c == '\n') {
        r->line[r->line_len] = 0;
        r->left = strtol(r->line, NULL, 16);
        r->line_len = 0;
        if (r->left == 0) r->finished = 1;
      } else if (c != '\r' && r->line_len + 1 < sizeof r->line) {
        r->line[r->line_len++] = (char)c;
      }
      continue;
    }
    size_t take = (size_t)r->left < n - i ? (size_t)r->left : n - i;
    payload(r, d + i, take);
    i += take;
    r->left -= (long)take;
    if (r->left == 0) { r->left = -1; r->skip_crlf = 2; }
  }
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: sse-readers PORT KEY TASK_ID N STALL REF_FILE\n");
    return 2;
  }
  int port = atoi(argv[1]), n = atoi(argv[4]), stall = atoi(argv[5]);
  const char *key = argv[2], *id = argv[3], *ref_file = argv[6];
  char req[1024];
  int req_len = snprintf(req, sizeof req, "GET /v1/video/tasks/%s/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", id, key);
  ref_cap = 1 << 20;
  ref = malloc(ref_cap);
  Reader *rs = calloc((size_t)n, sizeof(Reader));
  if (!ref || !rs) die("malloc");
  int ep = epoll_create1(0);
  if (ep < 0) die("epoll_create1");
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  for (int i = 0; i < n; i++) {
    Reader *r = &rs[i];
    r->left = -1;
    r->same = 1;
    r->stalled = i < stall;
    r->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (r->fd < 0) die("socket");
    // A blocking connect and request (loopback: immediate), then non-blocking reads.
    if (connect(r->fd, (struct sockaddr *)&addr, sizeof addr) != 0) die("connect");
    if (write(r->fd, req, (size_t)req_len) != req_len) die("write");
    fcntl(r->fd, F_SETFL, fcntl(r->fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (unsigned)i};
    if (epoll_ctl(ep, EPOLL_CTL_ADD, r->fd, &ev) != 0) die("epoll_ctl");
  }
  struct epoll_event in_ev = {.events = EPOLLIN, .data.u32 = (unsigned)n};
  if (stall > 0 && epoll_ctl(ep, EPOLL_CTL_ADD, 0, &in_ev) != 0) die("epoll_ctl stdin");
  int open_readers = n;
  static unsigned char buf[1 << 16];
  struct epoll_event evs[256];
  while (open_readers > 0) {
    int k = epoll_wait(ep, evs, 256, -1);
    if (k < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int e = 0; e < k; e++) {
      unsigned idx = evs[e].data.u32;
      if ((int)idx == n) {
        // The parent's word: the stalled readers read again.
        char line[64];
        if (read(0, line, sizeof line) <= 0) epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL);
        for (int i = 0; i < n; i++) {
          Reader *r = &rs[i];
          if (!r->paused || r->closed) continue;
          r->paused = 0;
          struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (unsigned)i};
          epoll_ctl(ep, EPOLL_CTL_ADD, r->fd, &ev);
        }
        continue;
      }
      Reader *r = &rs[idx];
      if (r->closed || r->paused) continue;
      for (;;) {
        ssize_t got = read(r->fd, buf, sizeof buf);
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
          close(r->fd);
          r->closed = 1;
          open_readers--;
          break;
        }
        const unsigned char *d = buf;
        size_t len = (size_t)got;
        if (!r->header_done) {
          size_t room = sizeof r->head - r->head_len;
          size_t take = len < room ? len : room;
          memcpy(r->head + r->head_len, d, take);
          r->head_len += take;
          char *end = memmem(r->head, r->head_len, "\r\n\r\n", 4);
          if (!end) {
            if (r->head_len == sizeof r->head) { fprintf(stderr, "response head too long\n"); return 1; }
            continue;
          }
          r->header_done = 1;
          r->head_ms = now_ms();
          size_t body_at = (size_t)(end - r->head) + 4;
          // Bytes of this read past the head (the head may have begun in an earlier read).
          size_t before = r->head_len - take;
          d = buf + (body_at - before);
          len = len - (body_at - before);
        }
        feed(r, d, len);
        if (r->finished) {
          close(r->fd);
          r->closed = 1;
          open_readers--;
          break;
        }
        if (r->stalled == 1 && r->bytes > 0) {
          // Stalled once: stop reading (the socket fills, the server sees a slow reader) until told.
          r->stalled = 2;
          r->paused = 1;
          epoll_ctl(ep, EPOLL_CTL_DEL, r->fd, NULL);
          break;
        }
      }
    }
  }
  FILE *f = fopen(ref_file, "wb");
  if (!f || fwrite(ref, 1, ref_len, f) != ref_len || fclose(f) != 0) die("ref file");
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  printf("{\"cpu_s\":%.3f,\"readers\":[", cpu);
  for (int i = 0; i < n; i++) {
    Reader *r = &rs[i];
    printf("%s{\"bytes\":%zu,\"same\":%s,\"done\":%s,\"stalled\":%s,\"head\":%lld,\"times\":[", i ? "," : "", r->bytes, r->same ? "true" : "false",
      r->finished ? "true" : "false", i < stall ? "true" : "false", r->head_ms);
    for (size_t j = 0; j < r->n_times; j++) printf("%s%lld", j ? "," : "", r->times[j]);
    printf("]}");
  }
  printf("]}\n");
  return 0;
}
