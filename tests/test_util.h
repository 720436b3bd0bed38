/* test_util.h -- a minimal test harness shared by the C tests.
   Each test prints one line: "PASS name", "FAIL name: first failures" or "SKIP name: why";
   tests/run.sh counts those lines. A test that checks nothing fails. */
#ifndef NVFP4MOE_TEST_UTIL_H
#define NVFP4MOE_TEST_UTIL_H
#if defined(__GNUC__)
#define TU_FN static __attribute__((unused))
#else
#define TU_FN static
#endif
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tu_checks, tu_failures, tu_skipped;
static char tu_msg[4096];
static size_t tu_msg_len;
static int tu_total_fail;

TU_FN void tu_note(const char* fmt, ...) {
  va_list ap;
  if (tu_msg_len > sizeof tu_msg - 200) return;
  va_start(ap, fmt);
  tu_msg_len += (size_t)vsnprintf(tu_msg + tu_msg_len, sizeof tu_msg - tu_msg_len, fmt, ap);
  va_end(ap);
}

/* CHECK(cond, fmt, ...): counts a check; on failure records the first few messages. */
#define CHECK(cond, ...)                                                \
  do {                                                                  \
    ++tu_checks;                                                        \
    if (!(cond)) {                                                      \
      if (++tu_failures <= 4) {                                         \
        tu_note(" [%s:%d] ", __FILE__, __LINE__);                       \
        tu_note(__VA_ARGS__);                                           \
      }                                                                 \
    }                                                                   \
  } while (0)

TU_FN void tu_skip(const char* why) {
  tu_skipped = 1;
  tu_note("%s", why);
}

/* TEST_ONLY=substring runs only the matching tests (the others print nothing). */
TU_FN void tu_run(const char* name, void (*fn)(void)) {
  const char* only = getenv("TEST_ONLY");
  if (only && only[0] && !strstr(name, only)) return;
  tu_checks = tu_failures = tu_skipped = 0;
  tu_msg_len = 0;
  tu_msg[0] = 0;
  fn();
  if (tu_skipped && tu_failures == 0) {
    printf("SKIP %s: %s\n", name, tu_msg);
  } else if (tu_failures == 0 && tu_checks > 0) {
    printf("PASS %s (%d checks)\n", name, tu_checks);
  } else {
    if (tu_checks == 0) tu_note("no checks ran");
    printf("FAIL %s: %d of %d checks failed:%s\n", name, tu_failures, tu_checks, tu_msg);
    ++tu_total_fail;
  }
  fflush(stdout);
}
#define RUN(fn) tu_run(#fn, fn)

/* xorshift64* -- fresh seed per run unless TEST_SEED is set; the seed is printed. */
static uint64_t tu_rng_state = 88172645463325252ull;
TU_FN uint64_t tu_rand(void) {
  tu_rng_state ^= tu_rng_state >> 12;
  tu_rng_state ^= tu_rng_state << 25;
  tu_rng_state ^= tu_rng_state >> 27;
  return tu_rng_state * 2685821657736338717ull;
}
TU_FN double tu_uniform(void) { return (double)(tu_rand() >> 11) * (1.0 / 9007199254740992.0); }
TU_FN double tu_normal(void) {
  double u = tu_uniform(), v = tu_uniform(), s;
  if (u < 1e-300) u = 1e-300;
  s = -2.0 * log(u);
  return sqrt(s) * cos(6.283185307179586 * v);
}
TU_FN void tu_seed_from_env(void) {
  const char* s = getenv("TEST_SEED");
  uint64_t seed = s ? strtoull(s, 0, 10) : 0;
  if (!seed) {
    FILE* f = fopen("/dev/urandom", "rb");
    if (!f || fread(&seed, sizeof seed, 1, f) != 1) seed = 0x9E3779B97F4A7C15ull;
    if (f) fclose(f);
  }
  if (!seed) seed = 1;
  tu_rng_state = seed;
  printf("# seed %llu (set TEST_SEED to repeat)\n", (unsigned long long)seed);
}

TU_FN float tu_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
TU_FN uint32_t tu_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* Quiet logger for tests that provoke errors on purpose; keeps the last message. */
static char tu_last_log[2048];
static int tu_log_count;
TU_FN void tu_logger(int level, const char* msg, void* user) {
  (void)level;
  (void)user;
  ++tu_log_count;
  snprintf(tu_last_log, sizeof tu_last_log, "%s", msg);
}
#endif
