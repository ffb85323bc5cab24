/*
 * The lab's slow disk without root: an LD_PRELOAD shim in the `lab serve` child that puts the
 * engine's data directory on a modelled device of N MB/s with one queue.
 *
 * The physics it keeps (what the root path's throttled loop device showed, docs/lab.md): writes
 * land in the page cache at once; a sync (fsync/fdatasync) sends the file's dirty bytes to the
 * device, which writes them in order at N MB/s, and returns when they are written. Every sync
 * queues behind those already queued, as a flush waits for the writes before it: so the
 * journal's small sync, issued while the checkpoint's burst drains, waits for the whole burst,
 * and writes that wait for the journal (j:true) stop for as long as it takes. Like the kernel's
 * flusher, bytes left dirty for 30 s (dirty_expire_centisecs; CKPTDIAG_SLOWDISK_EXPIRE_S) are
 * written in the background when they expire, taking the device's time then, so a checkpoint's
 * sync finds only what was written since.
 *
 * Only files under CKPTDIAG_SLOWDISK_DIR are modelled; everything else passes straight through.
 * The device's counters (bytes, requests, busy time) go to a small shared file,
 * CKPTDIAG_SLOWDISK_STATE, that the recorder reads as a disk's /proc/diskstats counters
 * (ckptdiag/lab/modeldisk.py). Built as an ordinary shared object by setup.py (no Python API).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 65536
#define MAX_TRACKED 1024 /* files of the data directory open at once (the engine keeps a few dozen) */
#define AGE_SLOTS 64      /* a file's dirty bytes by the second they were written, for 64 s */

/* The shared state: the layout ckptdiag/lab/modeldisk.py reads (little-endian int64s). */
struct state {
    int64_t magic;        /* STATE_MAGIC once set up */
    int64_t seq;          /* odd while being updated (a seqlock: readers retry) */
    int64_t rate_bps;     /* bytes a second the device writes */
    int64_t busy_until;   /* CLOCK_MONOTONIC ns when the last queued byte is written */
    int64_t reserved_ns;  /* device time of every request so far, in ns */
    int64_t bytes;        /* bytes of every request so far */
    int64_t requests;     /* requests (syncs that wrote or flushed) */
    int64_t wait_ns;      /* time requests spent queued and being written, summed */
    int64_t in_flight;    /* syncs waiting for the device now */
};
#define STATE_MAGIC 0x6b73696477736c73LL /* "slwdisk" */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char prefix[4096];
static size_t prefix_len;
static struct state local_state;
static struct state *st = &local_state;
static unsigned char tracked[MAX_FD];
static int64_t dirty[MAX_FD];
struct slot {
    int64_t sec;
    int64_t bytes;
};
static struct slot *ages[MAX_FD]; /* per tracked file: AGE_SLOTS slots, allocated when tracked */
static int open_fds[MAX_TRACKED];
static int n_open;
static int64_t expire_ns = 30000000000LL;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void setup(void) {
    real_open = dlsym(RTLD_NEXT, "open");
    real_open64 = dlsym(RTLD_NEXT, "open64");
    real_openat = dlsym(RTLD_NEXT, "openat");
    real_openat64 = dlsym(RTLD_NEXT, "openat64");
    real_close = dlsym(RTLD_NEXT, "close");
    real_write = dlsym(RTLD_NEXT, "write");
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    const char *dir = getenv("CKPTDIAG_SLOWDISK_DIR");
    const char *mb = getenv("CKPTDIAG_SLOWDISK_MB_S");
    const char *path = getenv("CKPTDIAG_SLOWDISK_STATE");
    if (dir == NULL || mb == NULL || dir[0] != '/' || strlen(dir) >= sizeof(prefix) - 1)
        return; /* not configured: pass everything through */
    double rate = strtod(mb, NULL) * 1048576.0;
    if (!(rate > 0))
        return;
    if (path != NULL) {
        int fd = real_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) {
            if (ftruncate(fd, sizeof(struct state)) == 0) {
                void *p = mmap(NULL, sizeof(struct state), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (p != MAP_FAILED)
                    st = p;
            }
            real_close(fd);
        }
    }
    memset(st, 0, sizeof(*st));
    st->rate_bps = (int64_t)rate;
    const char *expire = getenv("CKPTDIAG_SLOWDISK_EXPIRE_S");
    if (expire != NULL && strtod(expire, NULL) > 0)
        expire_ns = (int64_t)(strtod(expire, NULL) * 1e9);
    st->busy_until = now_ns();
    strcpy(prefix, dir);
    prefix_len = strlen(prefix);
    if (prefix[prefix_len - 1] != '/')
        prefix[prefix_len++] = '/';
    __atomic_store_n(&st->magic, STATE_MAGIC, __ATOMIC_RELEASE);
}

static int modelled(const char *path) {
    return prefix_len && path && strncmp(path, prefix, prefix_len) == 0;
}

/* openat: an absolute path by its prefix, a relative one by its directory's descriptor (the
 * engine opens its files by absolute path; a relative path from the working directory is not
 * modelled). */
static int in_dir(int dirfd, const char *path) {
    if (!prefix_len || path == NULL)
        return 0;
    if (path[0] == '/')
        return modelled(path);
    return dirfd >= 0 && dirfd < MAX_FD && tracked[dirfd];
}

/* Queue ``bytes`` on the device no earlier than ``at``: -> when they are written. Under the lock. */
static int64_t enqueue(int64_t at, int64_t bytes, int64_t issued) {
    int64_t need = (int64_t)((double)bytes * 1e9 / (double)st->rate_bps);
    if (need < 20000)
        need = 20000; /* a flush costs the device a little even with nothing to write: 20 us */
    int64_t begin = st->busy_until > at ? st->busy_until : at;
    int64_t done = begin + need;
    __atomic_add_fetch(&st->seq, 1, __ATOMIC_ACQ_REL);
    st->busy_until = done;
    st->reserved_ns += need;
    st->bytes += bytes;
    st->requests += 1;
    st->wait_ns += done > issued ? done - issued : 0;
    __atomic_add_fetch(&st->seq, 1, __ATOMIC_ACQ_REL);
    return done;
}

/* The flusher: every file's bytes dirty for expire_ns go to the device when they expired. */
static void expire(int64_t now) {
    for (int i = 0; i < n_open; i++) {
        int fd = open_fds[i];
        struct slot *s = ages[fd];
        for (int k = 0; s != NULL && k < AGE_SLOTS; k++) {
            int64_t due = s[k].sec * 1000000000LL + expire_ns;
            if (s[k].bytes > 0 && due <= now) {
                enqueue(due, s[k].bytes, due);
                dirty[fd] -= s[k].bytes;
                s[k].bytes = 0;
            }
        }
    }
}

static void track(int fd, int yes) {
    if (fd < 0 || fd >= MAX_FD)
        return;
    pthread_mutex_lock(&lock);
    if (tracked[fd]) { /* closed (or reused): forget it */
        for (int i = 0; i < n_open; i++)
            if (open_fds[i] == fd) {
                open_fds[i] = open_fds[--n_open];
                break;
            }
        free(ages[fd]);
        ages[fd] = NULL;
    }
    tracked[fd] = 0;
    dirty[fd] = 0;
    if (yes && n_open < MAX_TRACKED) {
        ages[fd] = calloc(AGE_SLOTS, sizeof(struct slot));
        if (ages[fd] != NULL) {
            tracked[fd] = 1;
            open_fds[n_open++] = fd;
        }
    }
    pthread_mutex_unlock(&lock);
}

static void wrote(int fd, ssize_t n) {
    if (n <= 0 || fd < 0 || fd >= MAX_FD || !tracked[fd])
        return;
    int64_t now = now_ns();
    int64_t sec = now / 1000000000LL;
    pthread_mutex_lock(&lock);
    struct slot *s = ages[fd];
    if (s != NULL) {
        struct slot *slot = &s[sec % AGE_SLOTS];
        if (slot->sec != sec) {
            if (slot->bytes > 0) { /* 64 s old and never expired (no sync since): it is written by now */
                enqueue(slot->sec * 1000000000LL + expire_ns, slot->bytes, now);
                dirty[fd] -= slot->bytes;
            }
            slot->sec = sec;
            slot->bytes = 0;
        }
        slot->bytes += n;
        dirty[fd] += n;
    }
    pthread_mutex_unlock(&lock);
}

/* A sync: the file's dirty bytes join the device's queue; return once they are written. */
static void drain(int fd) {
    if (fd < 0 || fd >= MAX_FD || !tracked[fd])
        return;
    int64_t start = now_ns();
    pthread_mutex_lock(&lock);
    expire(start);
    int64_t bytes = dirty[fd];
    dirty[fd] = 0;
    if (ages[fd] != NULL)
        memset(ages[fd], 0, AGE_SLOTS * sizeof(struct slot));
    int64_t done = enqueue(start, bytes, start);
    __atomic_add_fetch(&st->seq, 1, __ATOMIC_ACQ_REL);
    st->in_flight += 1;
    __atomic_add_fetch(&st->seq, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&lock);
    struct timespec until = {(time_t)(done / 1000000000LL), (long)(done % 1000000000LL)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {
    }
    pthread_mutex_lock(&lock);
    __atomic_add_fetch(&st->seq, 1, __ATOMIC_ACQ_REL);
    st->in_flight -= 1;
    __atomic_add_fetch(&st->seq, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_unlock(&lock);
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

/* The interposed entry points: each calls the real one, then tells the model what happened.
 * open/open64 and openat/openat64 (and pwrite/pwrite64, fsync/fdatasync) differ only in name. */
#define WRAP_OPEN(name)                                                                         \
    int name(const char *path, int flags, ...) {                                                \
        pthread_once(&once, setup);                                                             \
        va_list ap;                                                                             \
        va_start(ap, flags);                                                                    \
        mode_t mode = mode_arg(flags, ap);                                                      \
        va_end(ap);                                                                             \
        int fd = real_##name(path, flags, mode);                                                \
        if (fd >= 0)                                                                            \
            track(fd, modelled(path));                                                          \
        return fd;                                                                              \
    }

#define WRAP_OPENAT(name)                                                                       \
    int name(int dirfd, const char *path, int flags, ...) {                                     \
        pthread_once(&once, setup);                                                             \
        va_list ap;                                                                             \
        va_start(ap, flags);                                                                    \
        mode_t mode = mode_arg(flags, ap);                                                      \
        va_end(ap);                                                                             \
        int fd = real_##name(dirfd, path, flags, mode);                                         \
        if (fd >= 0)                                                                            \
            track(fd, in_dir(dirfd, path));                                                     \
        return fd;                                                                              \
    }

#define WRAP_PWRITE(name)                                                                       \
    ssize_t name(int fd, const void *buf, size_t n, off_t off) {                                \
        pthread_once(&once, setup);                                                             \
        ssize_t r = real_##name(fd, buf, n, off);                                               \
        wrote(fd, r);                                                                           \
        return r;                                                                               \
    }

#define WRAP_SYNC(name)                                                                         \
    int name(int fd) {                                                                          \
        pthread_once(&once, setup);                                                             \
        int r = real_##name(fd);                                                                \
        drain(fd);                                                                              \
        return r;                                                                               \
    }

WRAP_OPEN(open)
WRAP_OPEN(open64)
WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)
WRAP_PWRITE(pwrite)
WRAP_PWRITE(pwrite64)
WRAP_SYNC(fsync)
WRAP_SYNC(fdatasync)

int close(int fd) {
    pthread_once(&once, setup);
    track(fd, 0);
    return real_close(fd);
}

ssize_t write(int fd, const void *buf, size_t n) {
    pthread_once(&once, setup);
    ssize_t r = real_write(fd, buf, n);
    wrote(fd, r);
    return r;
}
