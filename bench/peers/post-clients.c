// The serve bench's load clients in one process of plain C (bench/suites/serve.ts compiles and runs it): C
// HTTP/1.1 keep-alive connections to loopback, each sending the same POST and its next one when the last is
// answered (a closed loop), for a number of milliseconds. The clients stand for callers on other machines, so
// what they cost the shared cores should be as little as a client can cost: in the server's own process, with
// fetch, they took ~2 ms of the main thread's CPU per request, beside a detect request's ~13 ms of server work.
//
//   post-clients PORT PATH KEY BODY_FILE C MS
//
// A 503 waits what its Retry-After header says (seconds; 50 ms without one) before the next request, as
// OpenAI's SDKs and the Node.js loop in serve.ts do. At the end one JSON line goes to stdout: {"cpu_s",
// "wall_ms", "ok", "refused", "errors", "ms": [latency of each 200, in ms]}.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
  size_t sent;       // bytes of the request written so far
  char head[8192];   // the response head, then the start of its body
  size_t head_len;
  long body_left;    // -1 while the head is being read
  int status;
  double retry_ms;   // a 503's Retry-After, in ms
  double started;    // when the request's first byte went out (ms)
  double resume_at;  // after a 503: when to send again (ms); 0 when not waiting
} Client;

static char *request;
static size_t request_len;
static int port;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int connect_one(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    perror("connect");
    exit(2);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Writes what the socket takes now of the request (blocking sockets, so normally all of it at once).
static int send_request(Client *c) {
  if (c->sent == 0) c->started = now_ms();
  while (c->sent < request_len) {
    ssize_t n = write(c->fd, request + c->sent, request_len - c->sent);
    if (n <= 0) return -1;
    c->sent += (size_t)n;
  }
  c->head_len = 0;
  c->body_left = -1;
  return 0;
}

// Reads what arrived; returns 1 when the response is complete, 0 when more is due, -1 on a closed socket.
static int read_response(Client *c) {
  char buf[65536];
  ssize_t n = read(c->fd, buf, sizeof buf);
  if (n <= 0) return -1;
  size_t off = 0;
  if (c->body_left < 0) {
    size_t take = (size_t)n;
    if (c->head_len + take > sizeof c->head - 1) take = sizeof c->head - 1 - c->head_len;
    memcpy(c->head + c->head_len, buf, take);
    c->head_len += take;
    c->head[c->head_len] = 0;
    char *end = strstr(c->head, "\r\n\r\n");
    if (!end) return c->head_len >= sizeof c->head - 1 ? -1 : 0;
    c->status = atoi(c->head + 9);
    char *cl = strcasestr(c->head, "\r\ncontent-length:");
    if (!cl || cl > end) return -1;  // every answer here carries its length
    c->body_left = atol(cl + 17);
    char *ra = strcasestr(c->head, "\r\nretry-after:");
    c->retry_ms = ra && ra < end ? atof(ra + 14) * 1000 : 50;
    if (c->retry_ms > 60000) c->retry_ms = 60000;
    size_t head_bytes = (size_t)(end + 4 - c->head);
    // What of this read lies past the head is body.
    off = head_bytes - (c->head_len - take);
  }
  c->body_left -= (long)((size_t)n - off);
  return c->body_left <= 0 ? 1 : 0;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: post-clients PORT PATH KEY BODY_FILE C MS\n");
    return 2;
  }
  port = atoi(argv[1]);
  const char *path = argv[2], *key = argv[3];
  int nc = atoi(argv[5]);
  double ms = atof(argv[6]);
  FILE *f = fopen(argv[4], "rb");
  if (!f) {
    perror("body");
    return 2;
  }
  fseek(f, 0, SEEK_END);
  long body_len = ftell(f);
  fseek(f, 0, SEEK_SET);
  request = malloc((size_t)body_len + 1024);
  int hl = snprintf(request, 1024,
                    "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                    "Content-Length: %ld\r\n\r\n",
                    path, key, body_len);
  if (fread(request + hl, 1, (size_t)body_len, f) != (size_t)body_len) return 2;
  fclose(f);
  request_len = (size_t)hl + (size_t)body_len;

  int ep = epoll_create1(0);
  Client *cs = calloc((size_t)nc, sizeof *cs);
  size_t cap = 1 << 16, nlat = 0;
  double *lat = malloc(cap * sizeof *lat);
  long ok = 0, refused = 0, errors = 0;
  double t0 = now_ms(), end = t0 + ms;
  for (int i = 0; i < nc; i++) {
    cs[i].fd = connect_one();
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    if (send_request(&cs[i]) != 0) errors++;
  }
  int active = nc;
  struct epoll_event evs[256];
  while (active > 0) {
    double t = now_ms();
    int wait = 50;
    for (int i = 0; i < nc; i++) {
      if (cs[i].resume_at <= 0) continue;
      if (cs[i].resume_at <= t) {
        cs[i].resume_at = 0;
        if (t >= end) {
          active--;
          continue;
        }
        cs[i].sent = 0;
        if (send_request(&cs[i]) != 0) errors++;
      } else if (cs[i].resume_at - t < wait) {
        wait = (int)(cs[i].resume_at - t) + 1;
      }
    }
    int n = epoll_wait(ep, evs, 256, wait);
    for (int k = 0; k < n; k++) {
      Client *c = &cs[evs[k].data.u32];
      int r = read_response(c);
      if (r == 0) continue;
      double done = now_ms();
      if (r < 0) {
        // The server closed the connection: count it and open another.
        errors++;
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
        close(c->fd);
        c->fd = connect_one();
        struct epoll_event ev = {.events = EPOLLIN, .data.u32 = evs[k].data.u32};
        epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev);
      } else if (c->status == 200) {
        ok++;
        if (nlat == cap) lat = realloc(lat, (cap *= 2) * sizeof *lat);
        lat[nlat++] = done - c->started;
      } else if (c->status == 503) {
        refused++;
        c->resume_at = done + c->retry_ms;
        continue;
      } else {
        errors++;
      }
      if (done >= end) {
        active--;
        continue;
      }
      c->sent = 0;
      if (send_request(c) != 0) errors++;
    }
  }
  double wall = now_ms() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  printf("{\"cpu_s\":%.3f,\"wall_ms\":%.1f,\"ok\":%ld,\"refused\":%ld,\"errors\":%ld,\"ms\":[", cpu, wall, ok, refused, errors);
  for (size_t i = 0; i < nlat; i++) printf(i ? ",%.2f" : "%.2f", lat[i]);
  printf("]}\n");
  return 0;
}
