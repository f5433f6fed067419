/*
 * index_scan: which files of a repository are indexed. Inside a git work tree the
 * answer is git's (tracked files plus untracked ones that are not ignored);
 * elsewhere a directory walk that leaves out version-control metadata,
 * virtualenvs, caches and build output. Only files with a language
 * (parse_lang_for_path) are listed. Files that cannot be indexed (too large,
 * a symlink leaving the repository or looping, not a regular file) are listed
 * separately with a reason; none of them makes the scan fail.
 *
 * The scan only stats files; reading them (and so noticing binary or
 * unreadable content) is the indexer's job, done only for changed files.
 */
#ifndef DRQA_SCAN_H
#define DRQA_SCAN_H

#include <stddef.h>

struct lang;
struct buf;

struct scan_file {
    char *path;               /* relative to the root, '/'-separated */
    const struct lang *lang;
    long long size;
    long long mtime_ns;
    long long ctime_ns;       /* with ino: moved by an edit that restores size and mtime */
    long long dev, ino;       /* of the file the scan checked (a followed link's target) */
    int via_link;             /* the path passes through a symlink the scan followed */
};

struct scan_skip {
    char *path;
    char *reason;             /* 'too large (2000000 bytes > 1048576)', 'symlink outside the repository', ... */
    long long size;           /* -1 when unknown */
};

/* A rule that left paths out of the listing, and how many (a directory left
 * out counts once, whatever it holds). */
struct scan_rule_count {
    char *rule;               /* 'sub/.gitignore:3: build/', 'virtualenv (pyvenv.cfg)', ... */
    long paths;
};

/* Owns everything it points to; scan_result_free releases it. Files are sorted by path. */
struct scan_result {
    struct scan_file *files; size_t nfiles, capfiles;
    struct scan_skip *skips; size_t nskips, capskips;
    struct scan_rule_count *rules; size_t nrules, caprules;   /* sorted by rule */
    int used_git;             /* 1 when git listed the files */
};

/* What decides which files are listed. */
struct scan_options {
    long long max_file_size;  /* larger files are skipped (0 = no limit) */
    int no_ignore;            /* walk everything but version-control metadata, git or not */
    int stat_threads;         /* threads that stat a walk's files (scan_stat.h); 0: as many as help */
};

/* A directory listing kept between walks, so that a walk need not read a
 * directory again while it is unchanged: only what the walk uses of the
 * listing is kept (subdirectories it descends into, symlinks, files with a
 * language, or that the directory is a virtualenv). A listing is trusted when
 * the directory's device, inode, mtime and ctime are those recorded; one taken
 * within a couple of seconds of the directory's last change is recorded with
 * mtime_ns -1 and so read again next time, since an entry added within the
 * same timestamp tick would not move the mtime. */
struct scan_dir {
    char *path;               /* relative to the root, "" for the root itself; no NUL inside */
    long long dev, ino, mtime_ns, ctime_ns;
    char *entries;            /* encoded listing (index_scan.c) */
    size_t len;
    int state;                /* old listings: SCAN_DIR_* after the walk */
};

enum { SCAN_DIR_UNSEEN, SCAN_DIR_KEPT, SCAN_DIR_RELISTED };

struct scan_dirs {
    /* the recorded listings (scan_dirs_add_old), looked up by path */
    struct scan_dir *old; size_t nold, capold;
    /* filled by the walk: listings new or different from the recorded ones,
     * to be stored; recorded listings left SCAN_DIR_UNSEEN were not reached
     * (the directory is gone, now skipped, or git listed the files) */
    struct scan_dir *fresh; size_t nfresh, capfresh;
    long listed, cached;      /* directories read, and taken from the record */
};

/* Adds a recorded listing (path is path[0..pathlen), copied with entries). */
void scan_dirs_add_old(struct scan_dirs *d, const char *path, size_t pathlen, long long dev, long long ino,
                       long long mtime_ns, long long ctime_ns, const void *entries, size_t len);
void scan_dirs_free(struct scan_dirs *d);
/* Recorded listings that are no longer right plus new ones: rows to write or delete. */
size_t scan_dirs_changes(const struct scan_dirs *d);
/* Names what decides a kept listing's contents (the languages' extensions and
 * the directories never walked): listings recorded under another stamp are
 * not used. Malloc'd. */
char *scan_dirs_stamp(void);

/* Lists the files of the repository at root_abs (an absolute, symlink-free
 * directory path) as so says. Inside a git work tree git lists them (unless
 * so->no_ignore); elsewhere a walk leaves out what the ignore files in the
 * tree exclude (.gitignore and .ignore, with git's semantics) and directories
 * shown by their contents to be no project source: a virtualenv (pyvenv.cfg
 * or bin/activate), node_modules beside a package.json, a cache directory
 * (CACHEDIR.TAG), *.egg-info metadata (PKG-INFO), __pycache__ and .tox. A
 * .drqaignore file (same syntax, highest precedence) applies in both cases;
 * version-control metadata (.git, .hg, .svn) is always left out. Every rule
 * that left a path out is counted in out->rules.
 * dirs (may be NULL): recorded directory listings used and updated by a walk
 * (git's listing does not use them). Returns 0, or -1 with a message naming
 * the root when it cannot be read. */
int scan_repo(const char *root_abs, const struct scan_options *so, struct scan_dirs *dirs, struct scan_result *out,
              char *err, size_t errlen);

/* Provenance: HEAD's commit of the git work tree holding root_abs (40 hex
 * digits into commit) and *dirty, 1 when the files beneath root_abs differ
 * from it (a tracked file changed, or an untracked file git does not ignore).
 * Returns 0, or -1 when root_abs is not in a git work tree with a commit. */
int scan_git_provenance(const char *root_abs, char commit[41], int *dirty);

/* Says why path (relative to the root, or absolute beneath it) is or is not
 * listed by scan_repo with so: the rule, its file and line. Appends lines
 * to out. Returns 0, or -1 with a message when the path is not beneath the root. */
int scan_explain(const char *root_abs, const struct scan_options *so, const char *path, struct buf *out, char *err,
                 size_t errlen);
void scan_result_free(struct scan_result *r);

/* Adds a skipped file (path and reason are copied). Used by the indexer for
 * files found unreadable or binary when read. */
void scan_add_skip(struct scan_result *r, const char *path, const char *reason, long long size);

/* Lenient UTF-8 decoding: returns a malloc'd NUL-terminated copy of s[0..n)
 * where every byte that does not start a valid sequence (and every NUL) is
 * replaced with U+FFFD; *bad counts the replacements. *outlen gets the length. */
char *scan_decode_utf8(const char *s, size_t n, size_t *outlen, int *bad);

/* 1 when the first 8 KiB of s[0..n) hold a NUL byte (the file is binary). */
int scan_is_binary(const char *s, size_t n);

#endif
