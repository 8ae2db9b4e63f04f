// cutfs: a pass-through FUSE file system that can "cut the power".
//
// Every operation goes straight to a backing directory (the live state, what programs see), and
// cutfs keeps beside it the *durable* state: what a Linux file system is guaranteed to still
// hold after a power cut. Writing `cut` to the control file `/.cutfs` throws away everything
// that is not durable: the backing directory is rebuilt to hold exactly the durable state, and
// from then on every operation fails with EIO (a dead disk) until the file system is unmounted.
// Mounting the backing directory again is the reboot. Unmounting without a cut is a clean
// shutdown: everything is kept.
//
// The model (conservative: only what POSIX and Linux's fsync(2) promise, nothing ext4 happens
// to do besides):
//   - A file's contents and size are durable as of its last fsync or fdatasync (through any
//     descriptor of that inode); writes, truncations and fallocate after it are lost at a cut.
//     Unsynced writes are lost whole: the model never keeps part of them.
//   - A directory's entries (which names exist and which inode each names: create, mkdir,
//     link, symlink, unlink, rmdir, rename) are durable as of the directory's last fsync. A file
//     that was fsynced but whose directory never was is lost; a rename between two directories
//     is durable in each only once each is fsynced; a new file whose entry is durable but which
//     was never fsynced is empty.
//   - What is in the backing directory at mount is durable. Mode bits are taken as they are at
//     the cut (chmod is not modelled); times and owners are not kept.
//   - "sync" on the control file makes everything durable (sync(2)); "cut-after N" cuts the
//     power right after the Nth fsync or fsyncdir from then on (that one's effect kept): the
//     way to visit every crash point of an operation in turn. "cut-after N stop" also stops
//     (SIGSTOP) the process that made that sync, before it sees the sync's answer: a power cut
//     stops the program with the disk, so it never answers anything from a dead disk. Reading the file says "cut" once
//     the power is gone, "running" before.
//
// Usage: cutfs BACKING MOUNTPOINT [FUSE options, e.g. -f]. The durable copies of files changed
// since their last fsync live in BACKING.cutfs/ (same file system, made and emptied at mount).
// Single-threaded on purpose: operations are applied one at a time, so "before the cut" and
// "after the cut" are well defined.
#define FUSE_USE_VERSION 35
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <signal.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#define CONTROL "/.cutfs"
#define IS_CONTROL(path) ((path) && !strcmp((path), CONTROL))

enum kind { K_FILE, K_DIR, K_LINK };
// Where a file's durable contents are: the live file itself (unchanged since its last fsync or
// since mount), a copy in the store, or nowhere (a file never synced: empty).
enum durable { D_LIVE, D_STORE, D_EMPTY };

struct node;
struct dentry {
    char *name;
    struct node *child;
};

struct node {
    uint64_t id;
    enum kind kind;
    mode_t mode;
    ino_t ino;             // the backing inode, while the node has live links
    int live;              // has a name in the live tree
    enum durable durable;  // files
    char *target;          // symlinks (never change)
    int durable_refs;      // durable entries naming this node
    struct dentry *entries;  // directories: the durable entries
    size_t count, capacity;
    struct node *next_in_bucket;
};

struct handle {
    int fd;
    struct node *node;  // NULL: the control file
};

static int backing = -1;      // the backing directory
static int store = -1;        // BACKING.cutfs/store
static char *backing_path, *state_path;
static struct node *root;
static uint64_t next_id = 1;
static int frozen;
static long cut_countdown;  // > 0: the power goes right after this many more fsyncs
static int stop_caller;     // and the process that made the last of them is stopped with it

#define BUCKETS 65536
static struct node *buckets[BUCKETS];

static void say(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "cutfs: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
}

static const char *rel(const char *path) { return path[1] ? path + 1 : "."; }

static struct node *find_ino(ino_t ino) {
    for (struct node *n = buckets[ino % BUCKETS]; n; n = n->next_in_bucket)
        if (n->ino == ino && n->live) return n;
    return NULL;
}

static void forget_ino(struct node *node) {
    struct node **at = &buckets[node->ino % BUCKETS];
    while (*at && *at != node) at = &(*at)->next_in_bucket;
    if (*at) *at = node->next_in_bucket;
    node->next_in_bucket = NULL;
    node->live = 0;
}

static struct node *new_node(const struct stat *st, enum durable durable) {
    struct node *node = calloc(1, sizeof *node);
    if (!node) abort();
    node->id = next_id++;
    node->kind = S_ISDIR(st->st_mode) ? K_DIR : S_ISLNK(st->st_mode) ? K_LINK : K_FILE;
    node->mode = st->st_mode;
    node->ino = st->st_ino;
    node->live = 1;
    node->durable = durable;
    node->next_in_bucket = buckets[st->st_ino % BUCKETS];
    buckets[st->st_ino % BUCKETS] = node;
    return node;
}

// The node of a live path (made, as never durable, if cutfs has not seen it: only something
// that bypassed the mount could have made it).
static struct node *node_at(const char *path, struct stat *out) {
    struct stat st;
    if (fstatat(backing, rel(path), &st, AT_SYMLINK_NOFOLLOW) != 0) return NULL;
    if (out) *out = st;
    struct node *node = find_ino(st.st_ino);
    return node ? node : new_node(&st, D_EMPTY);
}

static void store_name(const struct node *node, char *name, size_t size) {
    snprintf(name, size, "%llu", (unsigned long long)node->id);
}

// A descriptor that reads what `fd` refers to (which may be open for writing only).
static int reader_of(int fd) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return open(path, O_RDONLY | O_CLOEXEC);
}

static int copy_fd(int writable, int to) {
    int from = reader_of(writable);
    if (from < 0) return -errno;
    int result = 0;
    char buffer[1 << 16];
    off_t offset = 0;
    for (;;) {
        ssize_t n = pread(from, buffer, sizeof buffer, offset);
        if (n < 0) { if (errno == EINTR) continue; result = -errno; break; }
        if (n == 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(to, buffer + done, n - done);
            if (w < 0) { if (errno == EINTR) continue; result = -errno; goto out; }
            done += w;
        }
        offset += n;
    }
out:
    close(from);
    return result;
}

// Keeps a file's durable contents before its live contents change: a file whose durable
// contents are the live file gets a copy in the store. `fd` reads the live file.
static int before_change(struct node *node, int fd) {
    if (!node || node->kind != K_FILE || node->durable != D_LIVE) return 0;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size == 0) { node->durable = D_EMPTY; return 0; }
    char name[32];
    store_name(node, name, sizeof name);
    int out = openat(store, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) return -errno;
    int result = copy_fd(fd, out);
    close(out);
    if (result != 0) return result;
    node->durable = D_STORE;
    return 0;
}

static int before_change_path(struct node *node, const char *path) {
    if (!node || node->kind != K_FILE || node->durable != D_LIVE) return 0;
    int fd = openat(backing, rel(path), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -errno;
    int result = before_change(node, fd);
    close(fd);
    return result;
}

// fsync of a file: its live contents become its durable contents.
static void make_file_durable(struct node *node, int fd) {
    if (node->kind != K_FILE) return;
    char name[32];
    store_name(node, name, sizeof name);
    if (node->live) {
        node->durable = D_LIVE;
        unlinkat(store, name, 0);
        return;
    }
    // An unlinked file still open: durable entries may still name it; copy what it holds.
    if (node->durable_refs == 0) return;
    int out = openat(store, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out >= 0 && copy_fd(fd, out) == 0) node->durable = D_STORE;
    if (out >= 0) close(out);
}

// A node loses a live name: if that was its last, keep its durable contents (the live file is
// about to go) and forget its inode number (the backing file system may reuse it).
static int losing_name(struct node *node, const char *path) {
    struct stat st;
    if (fstatat(backing, rel(path), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
    if (node->kind == K_FILE && st.st_nlink > 1) return 0;
    if (node->kind == K_FILE && node->durable_refs > 0) {
        int result = before_change_path(node, path);
        if (result != 0) return result;
    }
    return 1;
}

// A listing of the directory `fd` from its start (a dup shares the offset, so rewind).
static DIR *listing_of(int fd) {
    int copy = dup(fd);
    if (copy < 0) return NULL;
    DIR *listing = fdopendir(copy);
    if (!listing) { close(copy); return NULL; }
    rewinddir(listing);
    return listing;
}

static void set_entries_from_live(struct node *dir, int fd) {
    for (size_t i = 0; i < dir->count; i++) {
        dir->entries[i].child->durable_refs--;
        free(dir->entries[i].name);
    }
    dir->count = 0;
    DIR *listing = listing_of(fd);
    if (!listing) return;
    struct dirent *entry;
    while ((entry = readdir(listing))) {
        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
        struct stat st;
        if (fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        struct node *child = find_ino(st.st_ino);
        if (!child) child = new_node(&st, D_EMPTY);
        if (dir->count == dir->capacity) {
            dir->capacity = dir->capacity ? dir->capacity * 2 : 16;
            dir->entries = realloc(dir->entries, dir->capacity * sizeof *dir->entries);
            if (!dir->entries) abort();
        }
        dir->entries[dir->count].name = strdup(entry->d_name);
        dir->entries[dir->count].child = child;
        dir->count++;
        child->durable_refs++;
    }
    closedir(listing);
}

// Everything live becomes durable (at mount, and for "sync").
static void make_tree_durable(struct node *dir, int fd) {
    set_entries_from_live(dir, fd);
    for (size_t i = 0; i < dir->count; i++) {
        struct node *child = dir->entries[i].child;
        if (child->kind == K_DIR) {
            int sub = openat(fd, dir->entries[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) { make_tree_durable(child, sub); close(sub); }
        } else if (child->kind == K_FILE) {
            child->durable = D_LIVE;
            char name[32];
            store_name(child, name, sizeof name);
            unlinkat(store, name, 0);
        } else if (!child->target) {
            char target[PATH_MAX];
            ssize_t n = readlinkat(fd, dir->entries[i].name, target, sizeof target - 1);
            if (n >= 0) { target[n] = 0; child->target = strdup(target); }
        }
    }
}

// ---- The cut: rebuild the backing directory as the durable state.

struct live_path { ino_t ino; char *path; };
static struct live_path *live_paths;
static size_t live_count, live_capacity;

static void index_live(int fd, const char *prefix) {
    DIR *listing = listing_of(fd);
    if (!listing) return;
    struct dirent *entry;
    while ((entry = readdir(listing))) {
        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "/" : "", entry->d_name);
        struct stat st;
        if (fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(fd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) { index_live(sub, path); close(sub); }
        } else if (S_ISREG(st.st_mode)) {
            if (live_count == live_capacity) {
                live_capacity = live_capacity ? live_capacity * 2 : 256;
                live_paths = realloc(live_paths, live_capacity * sizeof *live_paths);
                if (!live_paths) abort();
            }
            live_paths[live_count].ino = st.st_ino;
            live_paths[live_count].path = strdup(path);
            live_count++;
        }
    }
    closedir(listing);
}

static const char *live_path_of(ino_t ino) {
    for (size_t i = 0; i < live_count; i++)
        if (live_paths[i].ino == ino) return live_paths[i].path;
    return NULL;
}

// Materialized files, for hard links: node id → path under new/.
struct made { struct node *node; char *path; };
static struct made *made;
static size_t made_count, made_capacity;
static int new_dir = -1;

static const char *made_path(struct node *node) {
    for (size_t i = 0; i < made_count; i++)
        if (made[i].node == node) return made[i].path;
    return NULL;
}

static void remember_made(struct node *node, const char *path) {
    if (made_count == made_capacity) {
        made_capacity = made_capacity ? made_capacity * 2 : 256;
        made = realloc(made, made_capacity * sizeof *made);
        if (!made) abort();
    }
    made[made_count].node = node;
    made[made_count].path = strdup(path);
    made_count++;
}

static int place_file(struct node *node, const char *path) {
    const char *earlier = made_path(node);
    if (earlier) return linkat(new_dir, earlier, new_dir, path, 0);
    int result = 0;
    if (node->durable == D_EMPTY) {
        int fd = openat(new_dir, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, node->mode & 07777);
        if (fd < 0) return -1;
        close(fd);
    } else {
        int from_dir = backing;
        char name[32];
        const char *from = NULL;
        if (node->durable == D_STORE) {
            store_name(node, name, sizeof name);
            from = name;
            from_dir = store;
        } else {
            from = node->live ? live_path_of(node->ino) : NULL;
        }
        if (!from) {
            say("no live file for durable node %llu; it comes back empty", (unsigned long long)node->id);
            int fd = openat(new_dir, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, node->mode & 07777);
            if (fd >= 0) close(fd);
            remember_made(node, path);
            return fd >= 0 ? 0 : -1;
        }
        // A hard link: nothing writes to the old tree any more, and it is removed next.
        if (linkat(from_dir, from, new_dir, path, 0) != 0) {
            int in = openat(from_dir, from, O_RDONLY | O_CLOEXEC);
            int out = openat(new_dir, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, node->mode & 07777);
            result = (in >= 0 && out >= 0) ? copy_fd(in, out) : -1;
            if (in >= 0) close(in);
            if (out >= 0) close(out);
        }
        fchmodat(new_dir, path, node->mode & 07777, 0);
    }
    remember_made(node, path);
    return result;
}

static int materialize(struct node *dir, const char *prefix, int depth) {
    int failures = 0;
    if (depth > 200) return 1;
    for (size_t i = 0; i < dir->count; i++) {
        struct node *child = dir->entries[i].child;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", prefix, dir->entries[i].name);
        if (child->kind == K_DIR) {
            if (made_path(child)) { say("directory node %llu is durable in two places; kept at the first", (unsigned long long)child->id); continue; }
            remember_made(child, path);
            if (mkdirat(new_dir, path, child->mode & 07777) != 0) { failures++; continue; }
            failures += materialize(child, path, depth + 1);
        } else if (child->kind == K_LINK) {
            if (!child->target || symlinkat(child->target, new_dir, path) != 0) failures++;
        } else if (place_file(child, path) != 0) {
            failures++;
        }
    }
    return failures;
}

static void remove_tree(int fd) {
    DIR *listing = listing_of(fd);
    if (!listing) return;
    struct dirent *entry;
    while ((entry = readdir(listing))) {
        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
        if (unlinkat(fd, entry->d_name, 0) == 0) continue;
        int sub = openat(fd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) { remove_tree(sub); close(sub); }
        unlinkat(fd, entry->d_name, AT_REMOVEDIR);
    }
    closedir(listing);
}

static int cut(void) {
    frozen = 1;
    cut_countdown = 0;
    index_live(backing, "");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/new", state_path);
    if (mkdir(path, 0700) != 0 && errno != EEXIST) return -errno;
    new_dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (new_dir < 0) return -errno;
    remove_tree(new_dir);
    int failures = materialize(root, ".", 0);
    remove_tree(backing);
    // Move the durable tree into place.
    DIR *listing = listing_of(new_dir);
    struct dirent *entry;
    while (listing && (entry = readdir(listing))) {
        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
        if (renameat(new_dir, entry->d_name, backing, entry->d_name) != 0) failures++;
    }
    if (listing) closedir(listing);
    say("power cut: the backing directory holds the durable state (%d failures)", failures);
    return failures ? -EIO : 0;
}

// A sync (of a file or a directory) done: the armed cut comes when the count runs out.
static void counted_sync(void) {
    if (cut_countdown > 0 && --cut_countdown == 0) {
        // As a power cut stops the machine: the caller gets no further than this sync (SIGSTOP
        // to its thread's process before the answer; its other threads stop on their way back).
        if (stop_caller && fuse_get_context()->pid > 0) kill(fuse_get_context()->pid, SIGSTOP);
        cut();
    }
}

// ---- FUSE operations.

#define DEAD() do { if (frozen) return -EIO; } while (0)
#define CHECK(call) ((call) == 0 ? 0 : -errno)

static struct handle *handle_of(struct fuse_file_info *fi) { return (struct handle *)(uintptr_t)fi->fh; }

static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    if (IS_CONTROL(path)) {
        memset(st, 0, sizeof *st);
        st->st_mode = S_IFREG | 0600;
        st->st_nlink = 1;
        return 0;
    }
    DEAD();
    if (fi && handle_of(fi) && handle_of(fi)->fd >= 0) return CHECK(fstat(handle_of(fi)->fd, st));
    return CHECK(fstatat(backing, rel(path), st, AT_SYMLINK_NOFOLLOW));
}

static int op_access(const char *path, int mask) {
    if (IS_CONTROL(path)) return 0;
    DEAD();
    return CHECK(faccessat(backing, rel(path), mask, AT_SYMLINK_NOFOLLOW));
}

static int op_readlink(const char *path, char *buffer, size_t size) {
    DEAD();
    ssize_t n = readlinkat(backing, rel(path), buffer, size - 1);
    if (n < 0) return -errno;
    buffer[n] = 0;
    return 0;
}

static int op_opendir(const char *path, struct fuse_file_info *fi) {
    DEAD();
    int fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct handle *h = calloc(1, sizeof *h);
    h->fd = fd;
    struct stat st;
    h->node = fstat(fd, &st) == 0 ? find_ino(st.st_ino) : NULL;
    fi->fh = (uintptr_t)h;
    return 0;
}

static int op_readdir(const char *path, void *buffer, fuse_fill_dir_t fill, off_t offset,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)path; (void)offset; (void)flags;
    DEAD();
    DIR *listing = listing_of(handle_of(fi)->fd);
    if (!listing) return -errno;
    struct dirent *entry;
    while ((entry = readdir(listing))) {
        struct stat st;
        memset(&st, 0, sizeof st);
        st.st_ino = entry->d_ino;
        st.st_mode = (mode_t)DTTOIF(entry->d_type);
        if (fill(buffer, entry->d_name, &st, 0, 0)) break;
    }
    closedir(listing);
    return 0;
}

static int op_releasedir(const char *path, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = handle_of(fi);
    close(h->fd);
    free(h);
    return 0;
}

static int op_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)datasync;
    DEAD();
    struct handle *h = handle_of(fi);
    struct node *dir = h->node;
    if (!dir && path) dir = node_at(path, NULL);
    if (!dir || dir->kind != K_DIR) return -EIO;
    h->node = dir;
    set_entries_from_live(dir, h->fd);
    counted_sync();
    return 0;
}

static int op_mkdir(const char *path, mode_t mode) {
    DEAD();
    if (mkdirat(backing, rel(path), mode) != 0) return -errno;
    node_at(path, NULL);
    return 0;
}

static int op_symlink(const char *target, const char *path) {
    DEAD();
    if (symlinkat(target, backing, rel(path)) != 0) return -errno;
    struct node *node = node_at(path, NULL);
    if (node && !node->target) node->target = strdup(target);
    return 0;
}

static int op_link(const char *from, const char *to) {
    DEAD();
    return CHECK(linkat(backing, rel(from), backing, rel(to), 0));
}

static int op_unlink(const char *path) {
    DEAD();
    struct node *node = node_at(path, NULL);
    if (!node) return -errno;
    int last = losing_name(node, path);
    if (last < 0) return last;
    if (unlinkat(backing, rel(path), 0) != 0) return -errno;
    if (last) forget_ino(node);
    return 0;
}

static int op_rmdir(const char *path) {
    DEAD();
    struct node *node = node_at(path, NULL);
    if (unlinkat(backing, rel(path), AT_REMOVEDIR) != 0) return -errno;
    if (node) forget_ino(node);
    return 0;
}

static int op_rename(const char *from, const char *to, unsigned int flags) {
    DEAD();
    struct stat source, target;
    if (fstatat(backing, rel(from), &source, AT_SYMLINK_NOFOLLOW) != 0) return -errno;
    struct node *replaced = NULL;
    int last = 0;
    if (!(flags & RENAME_EXCHANGE) && fstatat(backing, rel(to), &target, AT_SYMLINK_NOFOLLOW) == 0
        && target.st_ino != source.st_ino) {
        replaced = node_at(to, NULL);
        if (replaced && !(flags & RENAME_NOREPLACE)) {
            last = replaced->kind == K_DIR ? 1 : losing_name(replaced, to);
            if (last < 0) return last;
        }
    }
    if (renameat2(backing, rel(from), backing, rel(to), flags) != 0) return -errno;
    if (replaced && last > 0) forget_ino(replaced);
    return 0;
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi) {
    DEAD();
    struct node *node;
    if (fi && handle_of(fi) && handle_of(fi)->node) {
        if (fchmod(handle_of(fi)->fd, mode) != 0) return -errno;
        node = handle_of(fi)->node;
    } else {
        if (fchmodat(backing, rel(path), mode, 0) != 0) return -errno;
        node = node_at(path, NULL);
    }
    if (node) node->mode = (node->mode & S_IFMT) | (mode & 07777);
    return 0;
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi) {
    DEAD();
    if (fi && handle_of(fi) && handle_of(fi)->fd >= 0) return CHECK(fchown(handle_of(fi)->fd, uid, gid));
    return CHECK(fchownat(backing, rel(path), uid, gid, AT_SYMLINK_NOFOLLOW));
}

static int op_utimens(const char *path, const struct timespec times[2], struct fuse_file_info *fi) {
    DEAD();
    if (fi && handle_of(fi) && handle_of(fi)->fd >= 0) return CHECK(futimens(handle_of(fi)->fd, times));
    return CHECK(utimensat(backing, rel(path), times, AT_SYMLINK_NOFOLLOW));
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    DEAD();
    if (fi && handle_of(fi) && handle_of(fi)->node) {
        struct handle *h = handle_of(fi);
        int result = before_change(h->node, h->fd);
        if (result) return result;
        return CHECK(ftruncate(h->fd, size));
    }
    int fd = openat(backing, rel(path), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return -errno;
    struct stat st;
    struct node *node = fstat(fd, &st) == 0 ? find_ino(st.st_ino) : NULL;
    int result = before_change_path(node, path);
    if (result == 0) result = CHECK(ftruncate(fd, size));
    close(fd);
    return result;
}

static int open_file(const char *path, struct fuse_file_info *fi, int create, mode_t mode) {
    if (IS_CONTROL(path)) {
        struct handle *h = calloc(1, sizeof *h);
        h->fd = -1;
        fi->fh = (uintptr_t)h;
        fi->direct_io = 1;
        return 0;
    }
    DEAD();
    int flags = fi->flags & ~(O_NOFOLLOW);
    struct stat st;
    int existed = fstatat(backing, rel(path), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if ((flags & O_TRUNC) && existed) {
        struct node *node = find_ino(st.st_ino);
        int result = before_change_path(node, path);
        if (result) return result;
    }
    int fd = create ? openat(backing, rel(path), flags | O_CREAT | O_CLOEXEC, mode)
                    : openat(backing, rel(path), flags | O_CLOEXEC);
    if (fd < 0) return -errno;
    struct handle *h = calloc(1, sizeof *h);
    h->fd = fd;
    if (fstat(fd, &st) == 0) {
        h->node = find_ino(st.st_ino);
        if (!h->node) h->node = new_node(&st, D_EMPTY);
    }
    fi->fh = (uintptr_t)h;
    return 0;
}

static int op_open(const char *path, struct fuse_file_info *fi) { return open_file(path, fi, 0, 0); }
static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi) { return open_file(path, fi, 1, mode); }

static int op_read(const char *path, char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = handle_of(fi);
    if (!h->node && h->fd < 0) {
        char status[64];
        int n = snprintf(status, sizeof status, "%s\n", frozen ? "cut" : "running");
        if (offset >= n) return 0;
        size_t left = (size_t)(n - offset);
        if (size > left) size = left;
        memcpy(buffer, status + offset, size);
        return (int)size;
    }
    DEAD();
    ssize_t n = pread(h->fd, buffer, size, offset);
    return n < 0 ? -errno : (int)n;
}

static int control(const char *text, size_t size) {
    char line[64] = {0}, command[64];
    memcpy(line, text, size < sizeof line - 1 ? size : sizeof line - 1);
    memcpy(command, line, sizeof command);
    command[strcspn(command, " \n")] = 0;
    if (!strcmp(command, "cut")) {
        if (frozen) return 0;
        return cut();
    }
    if (!strcmp(command, "cut-after")) {
        // "cut-after N": the power goes right after the Nth fsync or fsyncdir from now (its
        // effect kept), for walking every crash point of an operation in turn.
        DEAD();
        char *end = NULL;
        long count = strtol(line + strlen("cut-after"), &end, 10);
        if (count <= 0) return -EINVAL;
        cut_countdown = count;
        stop_caller = end && strstr(end, "stop") != NULL;
        return 0;
    }
    if (!strcmp(command, "sync")) {
        DEAD();
        make_tree_durable(root, backing);
        return 0;
    }
    say("unknown command \"%s\" (cut, cut-after N, sync)", command);
    return -EINVAL;
}

static int op_write(const char *path, const char *buffer, size_t size, off_t offset, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = handle_of(fi);
    if (!h->node && h->fd < 0) {
        int result = control(buffer, size);
        return result ? result : (int)size;
    }
    DEAD();
    int result = before_change(h->node, h->fd);
    if (result) return result;
    ssize_t n = pwrite(h->fd, buffer, size, offset);
    return n < 0 ? -errno : (int)n;
}

static int op_fallocate(const char *path, int mode, off_t offset, off_t length, struct fuse_file_info *fi) {
    (void)path;
    DEAD();
    struct handle *h = handle_of(fi);
    int result = before_change(h->node, h->fd);
    if (result) return result;
    return CHECK(fallocate(h->fd, mode, offset, length));
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path; (void)datasync;
    struct handle *h = handle_of(fi);
    if (!h->node) return 0;
    DEAD();
    make_file_durable(h->node, h->fd);
    counted_sync();
    return 0;
}

static int op_flush(const char *path, struct fuse_file_info *fi) {
    (void)path; (void)fi;
    return 0;
}

static int op_release(const char *path, struct fuse_file_info *fi) {
    (void)path;
    struct handle *h = handle_of(fi);
    if (h->fd >= 0) close(h->fd);
    free(h);
    return 0;
}

static int op_statfs(const char *path, struct statvfs *st) {
    (void)path;
    DEAD();
    return CHECK(fstatvfs(backing, st));
}

static off_t op_lseek(const char *path, off_t offset, int whence, struct fuse_file_info *fi) {
    (void)path;
    if (frozen) return -EIO;
    off_t result = lseek(handle_of(fi)->fd, offset, whence);
    return result < 0 ? -errno : result;
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    // Every write reaches cutfs when it is made (no write-back cache in the kernel): what was
    // written before the cut is what cutfs saw before it.
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
    cfg->use_ino = 1;
    cfg->entry_timeout = 0;
    cfg->attr_timeout = 0;
    cfg->negative_timeout = 0;
    cfg->hard_remove = 1;
    cfg->nullpath_ok = 1;
    return NULL;
}

static const struct fuse_operations operations = {
    .init = op_init,
    .getattr = op_getattr,
    .access = op_access,
    .readlink = op_readlink,
    .opendir = op_opendir,
    .readdir = op_readdir,
    .releasedir = op_releasedir,
    .fsyncdir = op_fsyncdir,
    .mkdir = op_mkdir,
    .symlink = op_symlink,
    .link = op_link,
    .unlink = op_unlink,
    .rmdir = op_rmdir,
    .rename = op_rename,
    .chmod = op_chmod,
    .chown = op_chown,
    .utimens = op_utimens,
    .truncate = op_truncate,
    .open = op_open,
    .create = op_create,
    .read = op_read,
    .write = op_write,
    .fallocate = op_fallocate,
    .fsync = op_fsync,
    .flush = op_flush,
    .release = op_release,
    .statfs = op_statfs,
    .lseek = op_lseek,
};

int main(int argc, char *argv[]) {
    if (argc < 3) {
        fprintf(stderr, "usage: cutfs BACKING MOUNTPOINT [FUSE options]\n");
        return 2;
    }
    backing_path = realpath(argv[1], NULL);
    if (!backing_path) { perror(argv[1]); return 1; }
    backing = open(backing_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (backing < 0) { perror(argv[1]); return 1; }
    if (asprintf(&state_path, "%s.cutfs", backing_path) < 0) return 1;
    mkdir(state_path, 0700);
    int state = open(state_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (state < 0) { perror(state_path); return 1; }
    remove_tree(state);
    if (mkdirat(state, "store", 0700) != 0) { perror("store"); return 1; }
    store = openat(state, "store", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    close(state);
    struct stat st;
    if (fstat(backing, &st) != 0) { perror(argv[1]); return 1; }
    root = new_node(&st, D_LIVE);
    root->durable_refs = 1;
    make_tree_durable(root, backing);

    // fuse_main gets MOUNTPOINT and the options, single-threaded (-s).
    char **args = calloc((size_t)argc + 2, sizeof *args);
    int count = 0;
    args[count++] = argv[0];
    args[count++] = "-s";
    for (int i = 2; i < argc; i++) args[count++] = argv[i];
    return fuse_main(count, args, &operations, NULL);
}
