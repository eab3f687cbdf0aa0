/* A stand-in for the NVIDIA driver's management library (libnvidia-ml.so.1) on a host without a GPU, for the
 * tests of sightflow's GPU readings (native/core/gpu): the calls it makes, by NVML's documented C signatures,
 * answering for cards that do not exist. NVML_STUB_INIT is the status nvmlInit_v2 returns (0, success, by
 * default), NVML_STUB_DEVICES the number of cards (2), NVML_STUB_UTIL card 0's utilisation in percent (37),
 * NVML_STUB_SLOW_MS how long counting the cards takes (0: a driver that hangs for a while).
 * Card 0 reads everything; card 1 has no video decoder or power reading (NOT_SUPPORTED); a third card is lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { unsigned int gpu, memory; } utilization_t;
typedef struct { unsigned long long total, free, used; } memory_t;

static int env_int(const char *name, int fallback) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : fallback;
}
static unsigned long long card(void *device) { return (unsigned long long)(size_t)device - 1; }

int nvmlInit_v2(void) { return env_int("NVML_STUB_INIT", 0); }
int nvmlShutdown(void) { return 0; }
const char *nvmlErrorString(int r) {
  switch (r) {
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    default: return "Unknown Error";
  }
}
int nvmlSystemGetDriverVersion(char *out, unsigned int n) {
  snprintf(out, n, "%s", "580.95.05");
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned int *n) {
  int slow = env_int("NVML_STUB_SLOW_MS", 0);
  if (slow > 0) usleep((useconds_t)slow * 1000);
  *n = (unsigned int)env_int("NVML_STUB_DEVICES", 2);
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **device) {
  if (i >= 2) return 15;
  *device = (void *)(size_t)(i + 1);
  return 0;
}
int nvmlDeviceGetName(void *d, char *out, unsigned int n) {
  snprintf(out, n, "Stub GPU %llu", card(d));
  return 0;
}
int nvmlDeviceGetUUID(void *d, char *out, unsigned int n) {
  snprintf(out, n, "GPU-00000000-0000-0000-0000-00000000000%llu", card(d));
  return 0;
}
int nvmlDeviceGetUtilizationRates(void *d, utilization_t *u) {
  u->gpu = card(d) == 0 ? (unsigned int)env_int("NVML_STUB_UTIL", 37) : 90;
  u->memory = 10;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, memory_t *m) {
  m->total = 80ULL << 30;
  m->used = (card(d) + 1) << 30;
  m->free = m->total - m->used;
  return 0;
}
int nvmlDeviceGetDecoderUtilization(void *d, unsigned int *util, unsigned int *period_us) {
  if (card(d) == 1) return 3;
  *util = 12;
  *period_us = 167000;
  return 0;
}
int nvmlDeviceGetPowerUsage(void *d, unsigned int *milliwatts) {
  if (card(d) == 1) return 3;
  *milliwatts = 123456;
  return 0;
}
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *celsius) {
  if (sensor != 0) return 2;
  *celsius = 41 + (unsigned int)card(d);
  return 0;
}
