/* The one atomic file writer (parity_support/atomic_file.h): the old file survives every failure,
 * bad targets are refused before anything is written, links are resolved or kept as asked. */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parity_support/atomic_file.h"
#include "test_util.h"

static char dir[64], path[128], err[300];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/parity-atomic-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/weights.bin", dir);
}

static void teardown(void) { pt_remove_tree(dir); }

TestSuite(atomic_file, .init = setup, .fini = teardown, .timeout = 30);

static size_t slurp(const char *p, char *buf, size_t n) {
  FILE *f = fopen(p, "rb");
  if (!f) return (size_t)-1;
  size_t got = fread(buf, 1, n, f);
  fclose(f);
  return got;
}

static int entries(void) { /* files in dir: no temporary left behind */
  DIR *d = opendir(dir);
  int count = 0;
  for (struct dirent *e; (e = readdir(d));) count += e->d_name[0] != '.';
  closedir(d);
  return count;
}

Test(atomic_file, writes_and_replaces_keeping_the_mode) {
  cr_assert_eq(psup_atomic_write(path, "old", 3, err, sizeof err), 0, "%s", err);
  cr_assert_eq(chmod(path, 0600), 0);
  cr_assert_eq(psup_atomic_write(path, "newer", 5, err, sizeof err), 0, "%s", err);
  char buf[16];
  cr_assert_eq(slurp(path, buf, sizeof buf), 5);
  cr_assert_eq(memcmp(buf, "newer", 5), 0);
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0600);
  cr_assert_eq(entries(), 1);
}

Test(atomic_file, an_aborted_write_leaves_the_old_file_and_no_temporary) {
  cr_assert_eq(psup_atomic_write(path, "old", 3, err, sizeof err), 0, "%s", err);
  psup_atomic_file af;
  cr_assert_eq(psup_atomic_open(&af, path, 0, err, sizeof err), 0, "%s", err);
  fputs("half of the new", af.f);
  fflush(af.f);
  psup_atomic_abort(&af);
  psup_atomic_abort(&af); /* twice is harmless */
  char buf[16];
  cr_assert_eq(slurp(path, buf, sizeof buf), 3);
  cr_assert_eq(memcmp(buf, "old", 3), 0);
  cr_assert_eq(entries(), 1);
}

/* A child killed by a file-size limit in the middle of the write: the target is the old file. */
Test(atomic_file, a_write_killed_by_a_size_limit_leaves_the_old_file) {
  cr_assert_eq(psup_atomic_write(path, "old", 3, err, sizeof err), 0, "%s", err);
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit rl = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &rl);
    static char big[1 << 16];
    memset(big, 'x', sizeof big);
    psup_atomic_write(path, big, sizeof big, err, sizeof err); /* SIGXFSZ */
    _exit(0);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ, "status %#x", status);
  char buf[16];
  cr_assert_eq(slurp(path, buf, sizeof buf), 3);
  cr_assert_eq(memcmp(buf, "old", 3), 0);
}

/* A write that fails (EFBIG here, by a size limit with SIGXFSZ ignored: the same path as ENOSPC on
 * a full disk) is reported, the temporary removed and the old file kept. */
Test(atomic_file, a_failed_write_is_an_error_and_the_old_file_stays) {
  cr_assert_eq(psup_atomic_write(path, "old", 3, err, sizeof err), 0, "%s", err);
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &rl);
    static char big[1 << 16];
    int rc = psup_atomic_write(path, big, sizeof big, err, sizeof err);
    _exit(rc == -1 && strstr(err, "File too large") && strstr(err, "unchanged") ? 0 : 1);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
  char buf[16];
  cr_assert_eq(slurp(path, buf, sizeof buf), 3);
  cr_assert_eq(entries(), 1);
}

Test(atomic_file, bad_targets_are_refused_before_anything_is_written) {
  cr_assert_eq(psup_atomic_check("/dev/full", err, sizeof err), -1);
  cr_assert(strstr(err, "a device"), "%s", err);
  cr_assert_eq(psup_atomic_check(dir, err, sizeof err), -1);
  cr_assert(strstr(err, "a folder"), "%s", err);
  char fifo[160];
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  cr_assert_eq(psup_atomic_check(fifo, err, sizeof err), -1); /* never blocks */
  cr_assert(strstr(err, "a FIFO"), "%s", err);
  cr_assert_eq(psup_atomic_check("/no/such/folder/w.bin", err, sizeof err), -1);
  cr_assert(strstr(err, "No such file or directory"), "%s", err);
  cr_assert_eq(psup_atomic_check("", err, sizeof err), -1);
  char longp[5000];
  memset(longp, 'a', sizeof longp - 1);
  longp[sizeof longp - 1] = 0;
  cr_assert_eq(psup_atomic_check(longp, err, sizeof err), -1);
  cr_assert(strstr(err, "longer than"), "%s", err);
  cr_assert_eq(psup_atomic_check("/proc/version", err, sizeof err), -1);
  cr_assert_eq(entries(), 1); /* the FIFO only */
}

Test(atomic_file, a_link_is_followed_unless_asked_not_to) {
  char real[160], link[160], buf[16];
  snprintf(real, sizeof real, "%s/real.bin", dir);
  snprintf(link, sizeof link, "%s/link.bin", dir);
  cr_assert_eq(psup_atomic_write(real, "old", 3, err, sizeof err), 0, "%s", err);
  cr_assert_eq(symlink(real, link), 0);
  cr_assert_eq(psup_atomic_write(link, "via", 3, err, sizeof err), 0, "%s", err);
  struct stat st;
  cr_assert_eq(lstat(link, &st), 0);
  cr_assert(S_ISLNK(st.st_mode));
  cr_assert_eq(slurp(real, buf, sizeof buf), 3);
  cr_assert_eq(memcmp(buf, "via", 3), 0);
  psup_atomic_file af;
  cr_assert_eq(psup_atomic_open(&af, link, PSUP_ATOMIC_NO_FOLLOW, err, sizeof err), 0, "%s", err);
  fputs("own", af.f);
  cr_assert_eq(psup_atomic_commit(&af, err, sizeof err), 0, "%s", err);
  cr_assert_eq(lstat(link, &st), 0);
  cr_assert(S_ISREG(st.st_mode)); /* the link itself replaced */
  cr_assert_eq(slurp(real, buf, sizeof buf), 3);
  cr_assert_eq(memcmp(buf, "via", 3), 0);
}
