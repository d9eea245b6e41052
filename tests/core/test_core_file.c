/* Output writes (src/core/file*.c): a symlink followed, a FIFO and a character device written through,
 * other kinds refused; file sets and staged directories committed as one set; the output directory
 * lock; the cleanup a signal (a crash too) runs, and the one the next run does after a SIGKILL. Every
 * node is made in a private temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "plush/core.h"
#include "plush/sys/core.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmp_dir[] = "/tmp/plush_core_file_XXXXXX";

static const char *at(const char *name)
{
    /* A few at once, for calls that take two paths; keep a copy of one that must live longer. */
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmp_dir, name);
    return buf[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The whole file as a string ("" when missing, so comparisons say what was there). */
static char *get(const char *path)
{
    static char buf[4096];
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

static int count_named(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, part))
            n++;
    closedir(d);
    return n;
}

static void remove_all(const char *path)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    remove_all(tmp_dir);
    return 0;
}

static plush_status write_text(const char *path, const char *text, plush_diag *d)
{
    return plush_file_write_atomic(path, text, strlen(text), d);
}

static void test_regular_file_replaced(void **state)
{
    (void)state;
    plush_diag d = {0};
    assert_int_equal(write_text(at("plain.txt"), "one", &d), PLUSH_OK);
    assert_int_equal(write_text(at("plain.txt"), "two", &d), PLUSH_OK);
    assert_string_equal(get(at("plain.txt")), "two");
    assert_int_equal(count_named(tmp_dir, "plush-tmp"), 0);
}

static void test_symlink_followed(void **state)
{
    (void)state;
    mkdir(at("real"), 0777);
    put(at("real/target.txt"), "old");
    assert_int_equal(symlink("real/target.txt", at("link.txt")), 0);
    plush_diag d = {0};
    assert_int_equal(write_text(at("link.txt"), "new", &d), PLUSH_OK);
    struct stat st;
    assert_int_equal(lstat(at("link.txt"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(get(at("real/target.txt")), "new");
    /* The temporary file went beside the target, and is gone. */
    assert_int_equal(count_named(at("real"), "plush-tmp"), 0);
    assert_int_equal(count_named(tmp_dir, "plush-tmp"), 0);
    /* A chain of links, and a dangling one: the file it names is created. */
    assert_int_equal(symlink("link.txt", at("link2.txt")), 0);
    assert_int_equal(write_text(at("link2.txt"), "chain", &d), PLUSH_OK);
    assert_string_equal(get(at("real/target.txt")), "chain");
    assert_int_equal(symlink("real/later.txt", at("dangling.txt")), 0);
    assert_int_equal(write_text(at("dangling.txt"), "made", &d), PLUSH_OK);
    assert_int_equal(lstat(at("dangling.txt"), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(get(at("real/later.txt")), "made");
    /* A loop is refused. */
    assert_int_equal(symlink("loop_b", at("loop_a")), 0);
    assert_int_equal(symlink("loop_a", at("loop_b")), 0);
    plush_diag l = {0};
    assert_int_equal(write_text(at("loop_a"), "x", &l), PLUSH_E_IO);
}

static void test_fifo_written_through(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(at("fifo"), 0600), 0);
    int back[2];
    assert_int_equal(pipe(back), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The reader: everything from the FIFO goes back through the pipe. */
        close(back[0]);
        int fd = open(at("fifo"), O_RDONLY);
        char buf[256];
        ssize_t n;
        while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0)
            if (write(back[1], buf, (size_t)n) != n)
                _exit(2);
        _exit(fd >= 0 ? 0 : 1);
    }
    close(back[1]);
    plush_diag d = {0};
    assert_int_equal(write_text(at("fifo"), "through the fifo", &d), PLUSH_OK);
    char got[256] = {0};
    size_t len = 0;
    for (ssize_t n; (n = read(back[0], got + len, sizeof got - 1 - len)) > 0;)
        len += (size_t)n;
    close(back[0]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_string_equal(got, "through the fifo");
    struct stat st;
    assert_int_equal(lstat(at("fifo"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

static void test_character_device_written_through(void **state)
{
    (void)state;
    /* The null device's numbers, as a private node: never the system's /dev. */
    if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) != 0) {
        print_message("skipped: mknod of a character device needs root (%s)\n", strerror(errno));
        skip();
    }
    plush_diag d = {0};
    assert_int_equal(write_text(at("null"), "into nothing", &d), PLUSH_OK);
    struct stat st;
    assert_int_equal(lstat(at("null"), &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(major(st.st_rdev), 1);
    assert_int_equal(minor(st.st_rdev), 3);
    /* Through a symlink too. */
    assert_int_equal(symlink("null", at("null_link")), 0);
    assert_int_equal(write_text(at("null_link"), "again", &d), PLUSH_OK);
    assert_int_equal(lstat(at("null"), &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(count_named(tmp_dir, "plush-tmp"), 0);
}

static void test_other_kinds_refused(void **state)
{
    (void)state;
    mkdir(at("a_dir"), 0777);
    plush_diag d = {0};
    assert_int_equal(write_text(at("a_dir"), "x", &d), PLUSH_E_IO);
    assert_non_null(strstr(d.message, "directory"));
    struct stat st;
    assert_int_equal(stat(at("a_dir"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", at("sock"));
    assert_int_equal(bind(s, (struct sockaddr *)&addr, sizeof addr), 0);
    plush_diag ds = {0};
    assert_int_equal(write_text(at("sock"), "x", &ds), PLUSH_E_IO);
    close(s);
    assert_int_equal(lstat(at("sock"), &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(count_named(tmp_dir, "plush-tmp"), 0);
}

static void test_file_set(void **state)
{
    (void)state;
    mkdir(at("set"), 0777);
    put(at("set/a.pmx"), "old a");
    put(at("set/b.vmd"), "old b");
    plush_diag d = {0};
    plush_file_set *set;
    /* Not committed: nothing changes, no temporary file stays. */
    assert_int_equal(plush_file_set_create(&set, &d), PLUSH_OK);
    assert_int_equal(plush_file_set_add(set, at("set/a.pmx"), "new a", 5, &d), PLUSH_OK);
    assert_int_equal(count_named(at("set"), ".a.pmx.plush-tmp."), 1);
    plush_file_set_destroy(set);
    assert_string_equal(get(at("set/a.pmx")), "old a");
    assert_int_equal(count_named(at("set"), "plush-tmp"), 0);
    /* Committed: both. */
    assert_int_equal(plush_file_set_create(&set, &d), PLUSH_OK);
    assert_int_equal(plush_file_set_add(set, at("set/a.pmx"), "new a", 5, &d), PLUSH_OK);
    assert_int_equal(plush_file_set_add(set, at("set/b.vmd"), "new b", 5, &d), PLUSH_OK);
    assert_string_equal(get(at("set/a.pmx")), "old a");
    assert_string_equal(get(at("set/b.vmd")), "old b");
    assert_int_equal(plush_file_set_commit(set, &d), PLUSH_OK);
    plush_file_set_destroy(set);
    assert_string_equal(get(at("set/a.pmx")), "new a");
    assert_string_equal(get(at("set/b.vmd")), "new b");
    assert_int_equal(count_named(at("set"), "plush-tmp"), 0);
    /* A target that cannot be written fails the add; the set is then dropped whole. */
    mkdir(at("set/c_dir"), 0777);
    assert_int_equal(plush_file_set_create(&set, &d), PLUSH_OK);
    assert_int_equal(plush_file_set_add(set, at("set/a.pmx"), "newer", 5, &d), PLUSH_OK);
    plush_diag bad = {0};
    assert_int_equal(plush_file_set_add(set, at("set/c_dir"), "x", 1, &bad), PLUSH_E_IO);
    plush_file_set_destroy(set);
    assert_string_equal(get(at("set/a.pmx")), "new a");
    assert_int_equal(count_named(at("set"), "plush-tmp"), 0);
}

/* A stage holding frame files 0..n-1 under frames/, and summary.txt. */
static plush_status stage_run(const char *dir, int n, bool commit)
{
    plush_diag d = {0};
    plush_file_stage *stage;
    plush_status st = plush_file_stage_begin(dir, &stage, &d);
    if (st != PLUSH_OK)
        return st;
    char path[600];
    snprintf(path, sizeof path, "%s/frames", plush_file_stage_path(stage));
    mkdir(path, 0777);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/frames/f%d.obj", plush_file_stage_path(stage), i);
        put(path, "frame");
    }
    snprintf(path, sizeof path, "%s/summary.txt", plush_file_stage_path(stage));
    put(path, n == 3 ? "three" : "two");
    if (n == 3) {
        snprintf(path, sizeof path, "%s/extra.glb", plush_file_stage_path(stage));
        put(path, "glb");
    }
    if (commit)
        st = plush_file_stage_commit(stage, &d);
    plush_file_stage_destroy(stage);
    return st;
}

static void test_stage(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", at("outdir"));
    mkdir(dir, 0777);
    put(at("outdir/mine.txt"), "the user's");
    assert_int_equal(stage_run(dir, 3, true), PLUSH_OK);
    assert_string_equal(get(at("outdir/summary.txt")), "three");
    assert_true(access(at("outdir/frames/f2.obj"), F_OK) == 0);
    assert_true(access(at("outdir/extra.glb"), F_OK) == 0);
    /* Fewer frames: the stale ones and the output this run does not make are gone, the user's file stays. */
    assert_int_equal(stage_run(dir, 2, true), PLUSH_OK);
    assert_string_equal(get(at("outdir/summary.txt")), "two");
    assert_true(access(at("outdir/frames/f1.obj"), F_OK) == 0);
    assert_true(access(at("outdir/frames/f2.obj"), F_OK) != 0);
    assert_true(access(at("outdir/extra.glb"), F_OK) != 0);
    assert_string_equal(get(at("outdir/mine.txt")), "the user's");
    /* Not committed: the previous set stays whole, no staging folder is left. */
    assert_int_equal(stage_run(dir, 3, false), PLUSH_OK);
    assert_string_equal(get(at("outdir/summary.txt")), "two");
    assert_true(access(at("outdir/frames/f2.obj"), F_OK) != 0);
    assert_int_equal(count_named(dir, ".plush-tmp"), 0);
    assert_int_equal(count_named(dir, ".plush-old"), 0);
}

/* A stage into dir holding the named files (each holding its own name) and, when protect is given, that
 * input marked; committed. The diag's warnings are counted into *warnings when not NULL. */
static plush_status stage_files(const char *dir, const char *const *names, size_t n, const char *protect,
                                uint32_t *warnings)
{
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_file_stage *stage;
    plush_status st = plush_file_stage_begin(dir, &stage, &d);
    if (st != PLUSH_OK)
        return st;
    char path[600];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", plush_file_stage_path(stage), names[i]);
        put(path, names[i]);
    }
    if (protect)
        assert_int_equal(plush_file_stage_protect(stage, protect, &d), PLUSH_OK);
    st = plush_file_stage_commit(stage, &d);
    plush_file_stage_destroy(stage);
    if (warnings)
        *warnings = d.warning_count;
    return st;
}

/* Only what .plush-set proves plush's own is replaced or removed: an output of the last commit the user
 * changed is neither, a list of the old format or one naming other files proves nothing, and an input of
 * the run stays even where the list proves it plush's. */
static void test_stage_ownership(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", at("owned"));
    const char *ab[] = {"a.pmx", "b.vmd"}, *c[] = {"c.csv"};
    assert_int_equal(stage_files(dir, ab, 2, NULL, NULL), PLUSH_OK);
    /* plush's own: replaced (a check says so first) */
    plush_diag d = {0};
    plush_diag_reset(&d);
    plush_file_stage *stage;
    assert_int_equal(plush_file_stage_begin(dir, &stage, &d), PLUSH_OK);
    assert_int_equal(plush_file_stage_check(stage, "a.pmx", &d), PLUSH_OK);
    assert_int_equal(plush_file_stage_check(stage, "new.glb", &d), PLUSH_OK);
    plush_file_stage_destroy(stage);
    assert_int_equal(stage_files(dir, ab, 2, NULL, NULL), PLUSH_OK);
    /* the user edits b.vmd: it is theirs now -- not replaced (nothing of the set moves), not removed */
    put(at("owned/b.vmd"), "edited by hand");
    assert_int_equal(plush_file_stage_begin(dir, &stage, &d), PLUSH_OK);
    assert_int_equal(plush_file_stage_check(stage, "b.vmd", &d), PLUSH_E_EXISTS);
    plush_file_stage_destroy(stage);
    assert_int_equal(stage_files(dir, ab, 2, NULL, NULL), PLUSH_E_EXISTS);
    assert_string_equal(get(at("owned/b.vmd")), "edited by hand");
    assert_int_equal(count_named(dir, ".plush-tmp"), 0);
    uint32_t warnings = 0;
    assert_int_equal(stage_files(dir, c, 1, NULL, &warnings), PLUSH_OK);
    assert_string_equal(get(at("owned/b.vmd")), "edited by hand");
    assert_true(access(at("owned/a.pmx"), F_OK) != 0); /* still plush's: removed */
    assert_int_equal(warnings, 1);
    /* touched, same bytes: the time no longer matches, so it is not replaced either */
    utimensat(AT_FDCWD, at("owned/c.csv"), NULL, 0);
    assert_int_equal(stage_files(dir, c, 1, NULL, NULL), PLUSH_E_EXISTS);
    remove(at("owned/c.csv"));

    /* a list of the old format, or one whose records are not the files', proves nothing */
    put(at("owned/notes"), "mine");
    put(at("owned/.plush-set"), "notes\nb.vmd\n");
    assert_int_equal(stage_files(dir, c, 1, NULL, &warnings), PLUSH_OK);
    assert_string_equal(get(at("owned/notes")), "mine");
    assert_int_equal(warnings, 2);
    /* (c.csv, unlisted now, would be the user's too) */
    remove(at("owned/c.csv"));
    put(at("owned/.plush-set"), "plush-set 2\nf 4 1700000000.000000000 0123456789abcdef notes\n");
    assert_int_equal(stage_files(dir, c, 1, NULL, &warnings), PLUSH_OK);
    assert_string_equal(get(at("owned/notes")), "mine");
    assert_int_equal(warnings, 1);

    /* an input stays where the list proves it plush's own: the last run's output run again (x.pmx) stays,
     * and stays listed; a folder holding an input stays too */
    const char *x[] = {"x.pmx"};
    assert_int_equal(stage_files(dir, x, 1, NULL, NULL), PLUSH_OK);
    assert_int_equal(stage_files(dir, c, 1, at("owned/x.pmx"), &warnings), PLUSH_OK);
    assert_string_equal(get(at("owned/x.pmx")), "x.pmx");
    assert_int_equal(warnings, 1);
    assert_int_equal(stage_files(dir, x, 1, at("owned/x.pmx"), NULL), PLUSH_E_EXISTS);
    assert_string_equal(get(at("owned/x.pmx")), "x.pmx");
    assert_int_equal(stage_files(dir, x, 1, NULL, NULL), PLUSH_OK); /* still listed, so a run without it replaces it */
    mkdir(at("owned/tex"), 0777);
    put(at("owned/tex/fur.png"), "fur");
    put(at("owned/.plush-set"), "tex\n");
    assert_int_equal(stage_files(dir, c, 1, at("owned/tex/fur.png"), &warnings), PLUSH_OK);
    assert_string_equal(get(at("owned/tex/fur.png")), "fur");
}

static void test_lock(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s", at("locked"));
    plush_diag d = {0};
    plush_file_lock *lock, *second;
    assert_int_equal(plush_file_lock_dir(dir, &lock, &d), PLUSH_OK);
    char pid[32];
    snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    assert_string_equal(get(at("locked/.plush.lock")), pid);
    plush_diag busy = {0};
    assert_int_equal(plush_file_lock_dir(dir, &second, &busy), PLUSH_E_LOCKED);
    assert_null(second);
    plush_file_unlock(lock);
    assert_true(access(at("locked/.plush.lock"), F_OK) != 0);
    assert_true(access(dir, F_OK) != 0); /* the lock made the folder, and it was left empty */
    assert_int_equal(mkdir(dir, 0777), 0);

    /* A lock held by a live process (the parent of this one, which outlives it). */
    char text[32];
    snprintf(text, sizeof text, "%ld\n", (long)getppid());
    put(at("locked/.plush.lock"), text);
    plush_diag live = {0};
    assert_int_equal(plush_file_lock_dir(dir, &second, &live), PLUSH_E_LOCKED);
    unlink(at("locked/.plush.lock"));

    /* A lock left by a process that has ended is taken over, with a warning. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    assert_int_equal(waitpid(child, NULL, 0), child);
    snprintf(text, sizeof text, "%ld\n", (long)child);
    put(at("locked/.plush.lock"), text);
    plush_diag stale = {0};
    assert_int_equal(plush_file_lock_dir(dir, &lock, &stale), PLUSH_OK);
    assert_int_equal(stale.warning_count, 1);
    assert_string_equal(get(at("locked/.plush.lock")), pid);
    plush_file_unlock(lock);
    assert_int_equal(count_named(dir, ".plush.lock"), 0);
}

/* How the child of interrupted_child ends: the signal raised, a real fault, or the signal sent to a worker
 * thread while the main thread holds it off. */
typedef enum ending { RAISED, FAULTED, ON_WORKER } ending;

static void *signal_self(void *arg)
{
    sigset_t open;
    sigemptyset(&open);
    sigaddset(&open, *(const int *)arg);
    pthread_sigmask(SIG_UNBLOCK, &open, NULL); /* it was made while the main thread held it off */
    pthread_kill(pthread_self(), *(const int *)arg);
    return NULL;
}

/* In a child: temporaries, a stage and a lock in flight, then the signal (raised, or for SIGSEGV a real
 * fault). The parent checks that the child died by the signal and left nothing behind. */
static void interrupted_child(int sig, ending how)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* as a terminal's or a service manager's signal finds it: not ignored (nohup would ignore SIGHUP,
         * and the cleanup rightly leaves an ignored signal ignored) */
        signal(sig, SIG_DFL);
        setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0}); /* a crash leaves no core file in the tree */
        plush_file_cleanup_on_signals();
        plush_diag d = {0};
        plush_file_set *set;
        plush_file_stage *stage;
        plush_file_lock *lock;
        if (plush_file_set_create(&set, &d) != PLUSH_OK ||
            plush_file_set_add(set, at("sig/a.pmx"), "new a", 5, &d) != PLUSH_OK ||
            plush_file_set_add(set, at("sig/b.vmd"), "new b", 5, &d) != PLUSH_OK ||
            plush_file_lock_dir(at("sig/out"), &lock, &d) != PLUSH_OK ||
            plush_file_stage_begin(at("sig/out"), &stage, &d) != PLUSH_OK)
            _exit(3);
        char path[600];
        snprintf(path, sizeof path, "%s/frame.obj", plush_file_stage_path(stage));
        put(path, "frame");
        if (count_named(at("sig"), "plush-tmp") != 2 || count_named(at("sig/out"), ".plush") != 2)
            _exit(4);
        if (how == FAULTED) {
            int *volatile nowhere = (int *)(uintptr_t)16; /* unmapped, and not NULL, which UBSan traps first */
            *nowhere = 1;
        } else if (how == ON_WORKER) {
            /* the worker passes it on: nothing is cleaned up beside this thread, which finds all still in
             * flight, says so, and then takes the signal */
            sigset_t block, old;
            sigemptyset(&block);
            sigaddset(&block, sig);
            pthread_sigmask(SIG_BLOCK, &block, &old);
            pthread_t worker;
            if (pthread_create(&worker, NULL, signal_self, &sig) != 0)
                _exit(6);
            pthread_join(worker, NULL);
            if (count_named(at("sig"), "plush-tmp") != 2 || count_named(at("sig/out"), ".plush") != 2)
                _exit(7);
            put(at("sig/main_saw_all"), "yes");
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        } else
            raise(sig);
        _exit(5);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (how == ON_WORKER) {
        assert_string_equal(get(at("sig/main_saw_all")), "yes");
        unlink(at("sig/main_saw_all"));
    }
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), sig);
    assert_string_equal(get(at("sig/a.pmx")), "old a");
    assert_string_equal(get(at("sig/b.vmd")), "old b");
    assert_int_equal(count_named(at("sig"), "plush-tmp"), 0);
    assert_int_equal(count_named(at("sig/out"), ".plush"), 0);
    assert_string_equal(get(at("sig/out/kept.txt")), "kept");
}

static void test_signals_remove_what_is_in_flight(void **state)
{
    (void)state;
    mkdir(at("sig"), 0777);
    mkdir(at("sig/out"), 0777);
    put(at("sig/a.pmx"), "old a");
    put(at("sig/b.vmd"), "old b");
    put(at("sig/out/kept.txt"), "kept");
    interrupted_child(SIGINT, RAISED);
    interrupted_child(SIGTERM, RAISED);
    interrupted_child(SIGHUP, RAISED);
    /* one a worker thread takes (a library's, when the main thread holds signals off round a commit) */
    interrupted_child(SIGTERM, ON_WORKER);
}

/* A crash (Bullet dying in a contact query is a SIGSEGV) cleans up as an interruption does, and the exit
 * status still names the signal. */
static void test_fatal_signals_remove_what_is_in_flight(void **state)
{
    (void)state;
    mkdir(at("sig"), 0777);
    mkdir(at("sig/out"), 0777);
    put(at("sig/a.pmx"), "old a");
    put(at("sig/b.vmd"), "old b");
    put(at("sig/out/kept.txt"), "kept");
    interrupted_child(SIGSEGV, FAULTED);
    const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        interrupted_child(fatal[i], RAISED);
}

/* SIGKILL leaves the lock and the staging folder: the next run takes the lock over and removes the
 * staging folder, with warnings, and leaves the user's files alone. */
static void test_killed_run_cleaned_by_the_next(void **state)
{
    (void)state;
    mkdir(at("killed"), 0777);
    put(at("killed/kept.txt"), "kept");
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        plush_diag d = {0};
        plush_file_stage *stage;
        plush_file_lock *lock;
        if (plush_file_lock_dir(at("killed"), &lock, &d) != PLUSH_OK ||
            plush_file_stage_begin(at("killed"), &stage, &d) != PLUSH_OK)
            _exit(3);
        char path[600];
        snprintf(path, sizeof path, "%s/frames", plush_file_stage_path(stage));
        mkdir(path, 0777);
        snprintf(path, sizeof path, "%s/frames/f0.obj", plush_file_stage_path(stage));
        put(path, "frame");
        raise(SIGKILL);
        _exit(5);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_int_equal(count_named(at("killed"), ".plush.lock"), 1);
    assert_int_equal(count_named(at("killed"), ".plush-tmp."), 1);

    plush_diag d = {0};
    plush_file_lock *lock;
    assert_int_equal(plush_file_lock_dir(at("killed"), &lock, &d), PLUSH_OK);
    assert_int_equal(d.warning_count, 2); /* the lock taken over, the staging folder removed */
    assert_int_equal(count_named(at("killed"), ".plush-tmp."), 0);
    assert_string_equal(get(at("killed/kept.txt")), "kept");
    plush_file_unlock(lock);
    assert_int_equal(count_named(at("killed"), ".plush"), 0);
}

static void test_cleanup_now(void **state)
{
    (void)state;
    mkdir(at("now"), 0777);
    plush_diag d = {0};
    plush_file_set *set;
    assert_int_equal(plush_file_set_create(&set, &d), PLUSH_OK);
    assert_int_equal(plush_file_set_add(set, at("now/x.txt"), "x", 1, &d), PLUSH_OK);
    assert_int_equal(count_named(at("now"), "plush-tmp"), 1);
    plush_file_cleanup_now();
    assert_int_equal(count_named(at("now"), "plush-tmp"), 0);
    plush_file_set_destroy(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_regular_file_replaced),
        cmocka_unit_test(test_symlink_followed),
        cmocka_unit_test(test_fifo_written_through),
        cmocka_unit_test(test_character_device_written_through),
        cmocka_unit_test(test_other_kinds_refused),
        cmocka_unit_test(test_file_set),
        cmocka_unit_test(test_stage),
        cmocka_unit_test(test_stage_ownership),
        cmocka_unit_test(test_lock),
        cmocka_unit_test(test_signals_remove_what_is_in_flight),
        cmocka_unit_test(test_fatal_signals_remove_what_is_in_flight),
        cmocka_unit_test(test_killed_run_cleaned_by_the_next),
        cmocka_unit_test(test_cleanup_now),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
