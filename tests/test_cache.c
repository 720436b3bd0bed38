/* test_cache.c -- the on-disk cubin cache: cold/warm, damaged files, key changes,
   unwritable and foreign directories, the no-JIT mode, directory precedence, and 8
   processes compiling the same key into one empty directory. Offline contexts
   (NVRTC only, no GPU) compiling the small gemm_portable_m16 specialisation. */
#define NVFP4MOE_IMPLEMENTATION
#include "../nvfp4moe.h"
#include "test_util.h"
#include <dirent.h>
#include <sys/wait.h>

#define SPEC NVFP4MOE__SPEC_GEMM_P16

static char g_root[512];
static const char* g_self;
static int g_warns;

static void count_warn(int level, const char* msg, void* user) {
  (void)user;
  if (level <= NVFP4MOE_LOG_WARN) ++g_warns;
  snprintf(tu_last_log, sizeof tu_last_log, "%s", msg);
}

static nvfp4moe_context* ctx_for(const char* dir, const char* target, unsigned flags) {
  nvfp4moe_desc d;
  nvfp4moe_context* ctx = 0;
  memset(&d, 0, sizeof d);
  d.flags = NVFP4MOE_FLAG_OFFLINE | flags;
  d.target = target;
  d.cache_dir = dir;
  d.logger.func = count_warn;
  d.logger.level = NVFP4MOE_LOG_WARN;
  if (nvfp4moe_create(&d, &ctx) != NVFP4MOE_SUCCESS) return 0;
  return ctx;
}

/* Files in dir: number of *.cubin and of anything else; the first cubin's path. */
static void list_dir(const char* dir, int* cubins, int* others, char* first, size_t n) {
  DIR* dp = opendir(dir);
  struct dirent* e;
  *cubins = *others = 0;
  if (first) first[0] = 0;
  if (!dp) return;
  while ((e = readdir(dp)) != 0) {
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.') continue;
    if (l > 6 && strcmp(e->d_name + l - 6, ".cubin") == 0) {
      if (first && !*cubins) snprintf(first, n, "%s/%s", dir, e->d_name);
      ++*cubins;
    } else {
      ++*others;
    }
  }
  closedir(dp);
}

/* Prepares SPEC in a new context on dir; fills info. Returns the result (-1: no context). */
static int prepare_in(const char* dir, const char* target, unsigned flags, nvfp4moe_info* info) {
  nvfp4moe_context* ctx = ctx_for(dir, target, flags);
  int r;
  if (!ctx) return -1;
  r = (int)nvfp4moe_prepare_specialization(ctx, SPEC, 0, 0);
  if (info) nvfp4moe_query_info(ctx, info);
  nvfp4moe_destroy(ctx);
  return r;
}

static void path_in(char* out, size_t n, const char* name) { snprintf(out, n, "%s/%s", g_root, name); }

static void test_cold_then_warm(void) {
  char dir[600], file[900];
  int cubins, others;
  nvfp4moe_info info;
  struct stat st;
  path_in(dir, sizeof dir, "a/b/c"); /* missing parents are created */
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0, "cold: %s", nvfp4moe_last_error());
  CHECK(info.compiles == 1 && info.disk_writes == 1 && info.disk_hits == 0, "cold: compiles %llu writes %llu hits %llu",
        info.compiles, info.disk_writes, info.disk_hits);
  CHECK(strcmp(info.cache_dir, dir) == 0, "cache dir %s", info.cache_dir);
  list_dir(dir, &cubins, &others, file, sizeof file);
  CHECK(cubins == 1 && others == 0, "%d cubins, %d other files", cubins, others);
  CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700, "directory mode %o, want 0700", (unsigned)(st.st_mode & 0777));
  CHECK(stat(file, &st) == 0 && (st.st_mode & 077) == 0, "file mode %o", (unsigned)(st.st_mode & 0777));
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0, "warm: %s", nvfp4moe_last_error());
  CHECK(info.compiles == 0 && info.disk_hits == 1, "warm: compiles %llu hits %llu", info.compiles, info.disk_hits);
}

static void damage_and_recover(const char* name, long keep, int flip_at) {
  char dir[600], file[900];
  int cubins, others;
  nvfp4moe_info info;
  size_t n = 0;
  unsigned char* buf;
  FILE* f;
  path_in(dir, sizeof dir, name);
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0 && info.compiles == 1, "fill: %s", nvfp4moe_last_error());
  list_dir(dir, &cubins, &others, file, sizeof file);
  buf = nvfp4moe__read_file(file, &n);
  CHECK(buf != 0 && n > 200, "read back %zu bytes", n);
  if (!buf) return;
  if (flip_at >= 0) buf[(size_t)flip_at < n ? (size_t)flip_at : n - 1] ^= 0x40;
  f = fopen(file, "wb");
  fwrite(buf, 1, keep < 0 ? n : (size_t)keep, f);
  fclose(f);
  free(buf);
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0, "after damage: %s", nvfp4moe_last_error());
  CHECK(info.disk_rejects == 1 && info.compiles == 1 && info.disk_writes == 1,
        "damaged file must be a miss and be rewritten: rejects %llu compiles %llu writes %llu", info.disk_rejects,
        info.compiles, info.disk_writes);
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0 && info.disk_hits == 1 && info.compiles == 0,
        "rewritten file is valid: hits %llu", info.disk_hits);
}

static void test_corrupt_payload(void) { damage_and_recover("corrupt_payload", -1, 5000); }
static void test_corrupt_header(void) { damage_and_recover("corrupt_header", -1, 20); }
static void test_truncated_file(void) { damage_and_recover("truncated", 3000, -1); }
static void test_truncated_to_header(void) { damage_and_recover("truncated_header", 40, -1); }
static void test_empty_file(void) { damage_and_recover("empty_file", 0, -1); }

/* Something not a regular file at the key's path (only the directory's owner can put one there): a miss,
   never a wait (a FIFO's open waited for a writer) or a huge allocation (a directory's "size"). The alarm
   turns a hang into a failed test binary. */
static void test_not_a_regular_file(void) {
  char dir[600], file[900];
  int cubins, others, kind;
  nvfp4moe_info info;
  struct stat st;
  for (kind = 0; kind < 2; ++kind) {
    path_in(dir, sizeof dir, kind ? "key_is_dir" : "key_is_fifo");
    CHECK(prepare_in(dir, "sm_80", 0, &info) == 0 && info.compiles == 1, "fill: %s", nvfp4moe_last_error());
    list_dir(dir, &cubins, &others, file, sizeof file);
    CHECK(cubins == 1 && unlink(file) == 0, "%d cubins", cubins);
    CHECK(kind ? mkdir(file, 0700) == 0 : mkfifo(file, 0600) == 0, "%s at %s", kind ? "mkdir" : "mkfifo", file);
    alarm(120);
    CHECK(prepare_in(dir, "sm_80", 0, &info) == 0 && info.compiles == 1 && info.disk_hits == 0,
          "%s at the key: a miss, compiled (compiles %llu hits %llu): %s", kind ? "a directory" : "a FIFO", info.compiles,
          info.disk_hits, nvfp4moe_last_error());
    alarm(0);
    /* the FIFO is replaced by the new file (rename); a directory stays, the kernel compiled in memory */
    CHECK(stat(file, &st) == 0 && (kind ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)), "after: mode %o",
          (unsigned)st.st_mode);
  }
}

/* A cache path longer than the library keeps (511 characters) is not cut short (that would name another
   directory): a warning, and no disk cache. */
static void test_long_directory(void) {
  char dir[700];
  int n;
  nvfp4moe_info info;
  struct stat st;
  n = snprintf(dir, sizeof dir, "%s", g_root); /* names of 99 characters (a file system takes up to 255) */
  while (n < 600) {
    int j;
    dir[n++] = '/';
    for (j = 0; j < 99; ++j) dir[n++] = 'd';
  }
  dir[n] = 0;
  g_warns = 0;
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0, "prepare: %s", nvfp4moe_last_error());
  CHECK(g_warns >= 1 && strstr(tu_last_log, "characters") != 0, "warning: %d, last log \"%s\"", g_warns, tu_last_log);
  CHECK(info.cache_dir[0] == 0 && info.disk_writes == 0, "no disk cache: dir \"%s\", writes %llu", info.cache_dir,
        info.disk_writes);
  dir[511] = 0;
  CHECK(stat(dir, &st) != 0, "the cut-short path %s was created", dir);
}

static void key_of(const char* target, unsigned flags, int spec, unsigned char key[32]) {
  nvfp4moe_context* ctx = ctx_for(0, target, flags | NVFP4MOE_FLAG_NO_DISK_CACHE);
  char arch[64];
  const char* opts[16];
  int n;
  memset(key, 0, 32);
  if (!ctx) return;
  n = nvfp4moe__options(ctx, spec, arch, opts);
  nvfp4moe__cache_key(ctx, opts, n, key);
  nvfp4moe_destroy(ctx);
}

static void test_key_changes(void) {
  unsigned char a[32], b[32], c[32], d[32], e[32], a2[32];
  key_of("sm_90a", 0, NVFP4MOE__SPEC_GEMM_P16, a);
  key_of("sm_90a", 0, NVFP4MOE__SPEC_GEMM_P16, a2);
  key_of("sm_80", 0, NVFP4MOE__SPEC_GEMM_P16, b);
  key_of("sm_90a", 0, NVFP4MOE__SPEC_GEMM_P32, c);
  key_of("sm_90a", NVFP4MOE_FLAG_SOFT_CVT, NVFP4MOE__SPEC_QUANTIZE, d);
  key_of("sm_90a", 0, NVFP4MOE__SPEC_QUANTIZE, e);
  CHECK(memcmp(a, a2, 32) == 0, "the key is deterministic");
  CHECK(memcmp(a, b, 32) != 0, "the target changes the key");
  CHECK(memcmp(a, c, 32) != 0, "tile options change the key");
  CHECK(memcmp(d, e, 32) != 0, "conversion options change the key");
  {
    /* the sorted options do not depend on how a spec lists them */
    nvfp4moe_context* ctx = ctx_for(0, "sm_100a", NVFP4MOE_FLAG_NO_DISK_CACHE);
    char arch[64];
    const char* opts[16];
    int n, i;
    CHECK(ctx != 0, "ctx");
    if (!ctx) return;
    n = nvfp4moe__options(ctx, NVFP4MOE__SPEC_QUANTIZE, arch, opts);
    for (i = 1; i < n; ++i) CHECK(strcmp(opts[i - 1], opts[i]) < 0, "options sorted: %s / %s", opts[i - 1], opts[i]);
    nvfp4moe_destroy(ctx);
  }
}

static void test_no_jit_mode(void) {
  char dir[600];
  nvfp4moe_info info;
  path_in(dir, sizeof dir, "nojit");
  CHECK(prepare_in(dir, "sm_80", NVFP4MOE_FLAG_NO_JIT, &info) == NVFP4MOE_ERROR_CACHE_MISS, "an empty cache must miss");
  CHECK(strstr(nvfp4moe_last_error(), "not in the cache") != 0, "message: %s", nvfp4moe_last_error());
  CHECK(info.compiles == 0, "nothing compiled in no-JIT mode");
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0, "fill");
  CHECK(prepare_in(dir, "sm_80", NVFP4MOE_FLAG_NO_JIT, &info) == 0 && info.disk_hits == 1, "then it hits");
  setenv("NVFP4MOE_NO_JIT", "1", 1);
  CHECK(prepare_in(g_root, "sm_80", 0, &info) == NVFP4MOE_ERROR_CACHE_MISS, "NVFP4MOE_NO_JIT=1 sets the flag");
  unsetenv("NVFP4MOE_NO_JIT");
}

/* An offline target without the arch-specific suffix that a GPU of that kind uses
   (sm_90 for sm_90a) builds a cache no GPU reads: one warning naming the right target;
   sm_80 and sm_90a give none. */
static void test_offline_target_warning(void) {
  char dir[600];
  static const char* const quiet[] = {"sm_80", "sm_90a", "sm_100a"};
  nvfp4moe_context* ctx;
  int i;
  path_in(dir, sizeof dir, "targets");
  g_warns = 0;
  ctx = ctx_for(dir, "sm_90", 0);
  CHECK(ctx != 0, "sm_90 is a valid offline target: %s", nvfp4moe_last_error());
  CHECK(g_warns == 1 && strstr(tu_last_log, "sm_90a") != 0, "one warning naming sm_90a (%d): %s", g_warns, tu_last_log);
  if (ctx) nvfp4moe_destroy(ctx);
  for (i = 0; i < 3; ++i) {
    g_warns = 0;
    ctx = ctx_for(dir, quiet[i], 0);
    CHECK(ctx != 0 && g_warns == 0, "%s: no warning (%d): %s", quiet[i], g_warns, tu_last_log);
    if (ctx) nvfp4moe_destroy(ctx);
  }
}

static void test_unwritable_directory(void) {
  char dir[600];
  int cubins, others;
  nvfp4moe_info info;
  nvfp4moe_context* ctx;
  if (geteuid() == 0) {
    snprintf(dir, sizeof dir, "/proc/self"); /* ours, 0555, and not writable even by root */
  } else {
    path_in(dir, sizeof dir, "readonly");
    nvfp4moe__mkdirs(dir);
    chmod(dir, 0500);
  }
  g_warns = 0;
  ctx = ctx_for(dir, "sm_80", 0);
  CHECK(ctx != 0, "context");
  if (!ctx) return;
  CHECK(nvfp4moe_prepare_specialization(ctx, NVFP4MOE__SPEC_GEMM_P16, 0, 0) == NVFP4MOE_SUCCESS, "compiles anyway: %s",
        nvfp4moe_last_error());
  CHECK(nvfp4moe_prepare_specialization(ctx, NVFP4MOE__SPEC_GEMM_P32, 0, 0) == NVFP4MOE_SUCCESS, "second kernel: %s",
        nvfp4moe_last_error());
  CHECK(g_warns == 1, "exactly one log line, got %d (%s)", g_warns, tu_last_log);
  nvfp4moe_query_info(ctx, &info);
  CHECK(info.cache_dir[0] == 0 && info.disk_writes == 0, "cache off after the failed write");
  nvfp4moe_destroy(ctx);
  if (geteuid() != 0) {
    list_dir(dir, &cubins, &others, 0, 0);
    CHECK(cubins == 0 && others == 0, "nothing written (%d, %d)", cubins, others);
    chmod(dir, 0700);
  }
}

static void test_foreign_directory(void) {
  char dir[600];
  nvfp4moe_info info;
  path_in(dir, sizeof dir, "shared");
  nvfp4moe__mkdirs(dir);
  chmod(dir, 0777); /* writable by anyone: cubins from there could be anyone's code */
  g_warns = 0;
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0, "still compiles");
  CHECK(info.cache_dir[0] == 0 && info.disk_writes == 0, "the directory is not used");
  CHECK(g_warns == 1 && strstr(tu_last_log, "writable by others") != 0, "one warning: %s", tu_last_log);
}

static void test_directory_precedence(void) {
  char want[600];
  nvfp4moe_info info;
  nvfp4moe_context* ctx;
  setenv("XDG_CACHE_HOME", g_root, 1);
  setenv("NVFP4MOE_CACHE_DIR", "", 1);
  unsetenv("NVFP4MOE_CACHE_DIR");
  ctx = ctx_for(0, "sm_80", 0);
  CHECK(ctx != 0, "ctx");
  if (ctx) {
    nvfp4moe_query_info(ctx, &info);
    snprintf(want, sizeof want, "%s/nvfp4moe", g_root);
    CHECK(strcmp(info.cache_dir, want) == 0, "XDG: %s", info.cache_dir);
    nvfp4moe_destroy(ctx);
  }
  path_in(want, sizeof want, "from_env");
  setenv("NVFP4MOE_CACHE_DIR", want, 1);
  ctx = ctx_for(0, "sm_80", 0);
  if (ctx) {
    nvfp4moe_query_info(ctx, &info);
    CHECK(strcmp(info.cache_dir, want) == 0, "env: %s", info.cache_dir);
    nvfp4moe_destroy(ctx);
  }
  path_in(want, sizeof want, "from_desc");
  ctx = ctx_for(want, "sm_80", 0);
  if (ctx) {
    nvfp4moe_desc d = nvfp4moe_query_desc(ctx);
    nvfp4moe_query_info(ctx, &info);
    CHECK(strcmp(info.cache_dir, want) == 0 && strcmp(d.cache_dir, want) == 0, "desc: %s", info.cache_dir);
    nvfp4moe_destroy(ctx);
  }
  unsetenv("NVFP4MOE_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
}

/* 8 processes, one key, one empty directory: all succeed, one valid file, no leftovers. */
static int child_main(const char* dir) {
  char go[700];
  struct stat st;
  int i;
  snprintf(go, sizeof go, "%s.go", dir);
  for (i = 0; i < 20000 && stat(go, &st) != 0; ++i) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, 0);
  }
  return prepare_in(dir, "sm_80", 0, 0) == 0 ? 0 : 3;
}

static void test_concurrent_processes(void) {
  char dir[600], go[700], file[900];
  pid_t pids[8];
  int i, ok = 0, cubins, others;
  nvfp4moe_info info;
  path_in(dir, sizeof dir, "concurrent");
  CHECK(nvfp4moe__mkdirs(dir) == 0, "mkdir");
  snprintf(go, sizeof go, "%s.go", dir);
  for (i = 0; i < 8; ++i) {
    pids[i] = fork();
    if (pids[i] == 0) {
      execl(g_self, g_self, "--child", dir, (char*)0);
      _exit(127);
    }
  }
  {
    FILE* f = fopen(go, "w");
    if (f) fclose(f);
  }
  for (i = 0; i < 8; ++i) {
    int status = 0;
    if (pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++ok;
  }
  CHECK(ok == 8, "%d of 8 processes succeeded", ok);
  list_dir(dir, &cubins, &others, file, sizeof file);
  CHECK(cubins == 1 && others == 0, "%d cubins and %d other files (temp files left?)", cubins, others);
  CHECK(prepare_in(dir, "sm_80", 0, &info) == 0 && info.disk_hits == 1 && info.disk_rejects == 0,
        "the file is valid: hits %llu rejects %llu", info.disk_hits, info.disk_rejects);
}

int main(int argc, char** argv) {
  char tmpl[] = "/tmp/nvfp4moe_cache_test.XXXXXX";
  g_self = argv[0];
  if (argc == 3 && strcmp(argv[1], "--child") == 0) return child_main(argv[2]);
  if (!mkdtemp(tmpl)) {
    printf("FAIL cache_tests: mkdtemp failed\n");
    return 1;
  }
  snprintf(g_root, sizeof g_root, "%s", tmpl);
  RUN(test_cold_then_warm);
  RUN(test_corrupt_payload);
  RUN(test_corrupt_header);
  RUN(test_truncated_file);
  RUN(test_truncated_to_header);
  RUN(test_empty_file);
  RUN(test_not_a_regular_file);
  RUN(test_long_directory);
  RUN(test_key_changes);
  RUN(test_no_jit_mode);
  RUN(test_offline_target_warning);
  RUN(test_unwritable_directory);
  RUN(test_foreign_directory);
  RUN(test_directory_precedence);
  RUN(test_concurrent_processes);
  {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_root);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_root);
  }
  return tu_total_fail ? 1 : 0;
}
