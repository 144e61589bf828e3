// Physical bounds for bitset work on this machine, printed as one JSON line.
// Built and run by bench/lib/bounds.js: cc -O3 -mpopcnt -pthread bounds.c
//  - popcount: 64-bit words/ns on one core over an L1-resident array (32 KiB)
//  - and+popcount: the dense bitset cell kernel, two L1-resident arrays
//  - read bandwidth: sum of a 512 MiB array, one thread and all threads
//  - copy bandwidth: memcpy of 256 MiB (bytes copied per second)
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// The empty asm with a memory clobber stops the compiler from hoisting the
// loop-invariant inner loop out of the repetitions.
#define BARRIER() __asm__ volatile("" ::: "memory")

static double popcount_rate(const uint64_t *a, size_t n, uint64_t *sink) {
  double best = 0;
  for (int trial = 0; trial < 5; trial++) {
    size_t iters = 100000;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    double t0 = now();
    for (size_t it = 0; it < iters; it++) {
      BARRIER();
      for (size_t i = 0; i < n; i += 4) {
        s0 += __builtin_popcountll(a[i]);
        s1 += __builtin_popcountll(a[i + 1]);
        s2 += __builtin_popcountll(a[i + 2]);
        s3 += __builtin_popcountll(a[i + 3]);
      }
    }
    double rate = (double)iters * n / ((now() - t0) * 1e9);
    if (rate > best) best = rate;
    *sink += s0 + s1 + s2 + s3;
  }
  return best;
}

static double and_popcount_rate(const uint64_t *a, const uint64_t *b, size_t n, uint64_t *sink) {
  double best = 0;
  for (int trial = 0; trial < 5; trial++) {
    size_t iters = 100000;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    double t0 = now();
    for (size_t it = 0; it < iters; it++) {
      BARRIER();
      for (size_t i = 0; i < n; i += 4) {
        s0 += __builtin_popcountll(a[i] & b[i]);
        s1 += __builtin_popcountll(a[i + 1] & b[i + 1]);
        s2 += __builtin_popcountll(a[i + 2] & b[i + 2]);
        s3 += __builtin_popcountll(a[i + 3] & b[i + 3]);
      }
    }
    double rate = (double)iters * n / ((now() - t0) * 1e9);
    if (rate > best) best = rate;
    *sink += s0 + s1 + s2 + s3;
  }
  return best;
}

typedef struct { const uint64_t *a; size_t n; uint64_t sum; } slice_t;

static void *sum_slice(void *arg) {
  slice_t *s = arg;
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i < s->n; i += 4) { s0 += s->a[i]; s1 += s->a[i + 1]; s2 += s->a[i + 2]; s3 += s->a[i + 3]; }
  s->sum = s0 + s1 + s2 + s3;
  return NULL;
}

static double read_rate(const uint64_t *a, size_t n, int threads, uint64_t *sink) {
  double best = 0;
  pthread_t tid[64];
  slice_t slices[64];
  for (int trial = 0; trial < 5; trial++) {
    double t0 = now();
    for (int t = 0; t < threads; t++) {
      slices[t].a = a + n / threads * t;
      slices[t].n = n / threads;
      pthread_create(&tid[t], NULL, sum_slice, &slices[t]);
    }
    for (int t = 0; t < threads; t++) { pthread_join(tid[t], NULL); *sink += slices[t].sum; }
    double rate = (double)(n / threads * threads) * 8 / ((now() - t0) * 1e9);
    if (rate > best) best = rate;
  }
  return best;
}

int main(void) {
  uint64_t sink = 0;
  const size_t small = 2048; // 16 KiB per array: both fit in a 32 KiB L1d
  uint64_t *a = aligned_alloc(64, small * 8), *b = aligned_alloc(64, small * 8);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < small; i++) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17; a[i] = x;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17; b[i] = x;
  }
  double popcnt = popcount_rate(a, small, &sink);
  double and_popcnt = and_popcount_rate(a, b, small, &sink);

  const size_t big = (size_t)64 << 20; // 64 Mi words = 512 MiB
  uint64_t *m = aligned_alloc(64, big * 8);
  for (size_t i = 0; i < big; i++) m[i] = i;
  int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  if (cores > 64) cores = 64;
  double read1 = read_rate(m, big, 1, &sink);
  double readN = read_rate(m, big, cores, &sink);
  const size_t half = big / 2;
  double copy = 0;
  for (int trial = 0; trial < 5; trial++) {
    double t0 = now();
    memcpy(m + half, m, half * 8);
    BARRIER();
    double rate = (double)half * 8 / ((now() - t0) * 1e9);
    if (rate > copy) copy = rate;
  }
  sink += m[big - 1];
  printf("{\"popcntWordsPerNs\":%.3f,\"andPopcntWordsPerNs\":%.3f,\"readGBps1\":%.2f,\"readGBpsAll\":%.2f,\"threads\":%d,\"copyGBps\":%.2f,\"sink\":%llu}\n",
         popcnt, and_popcnt, read1, readN, cores, copy, (unsigned long long)(sink & 0xff));
  return 0;
}
