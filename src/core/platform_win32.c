/* The Win32 half of the platform layer (platform.h), built with MinGW-w64. Paths arrive as UTF-8 and go to
 * the wide (W) calls as UTF-16; names read back (folders, the executable, the command line) come back as
 * UTF-8. Descriptors are the C runtime's (_wopen, _open_osfhandle), always in binary mode. */
#define WIN32_LEAN_AND_MEAN
#define UNICODE
#define _UNICODE
#include "core/platform.h"

#include <windows.h>
#include <shellapi.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>

enum { WPATH = PLUSH__OS_PATH_MAX };

/* ---- UTF-8 <-> UTF-16 ------------------------------------------------------------------------- */

/* path into a caller's buffer of WPATH wide characters; false (errno ENAMETOOLONG or EILSEQ) when it
 * does not fit or is not UTF-8. No allocation: the interrupt cleanup uses it too. */
static bool widen_into(const char *path, wchar_t *out)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, out, WPATH);
    if (n <= 0) {
        errno = GetLastError() == ERROR_INSUFFICIENT_BUFFER ? ENAMETOOLONG : EILSEQ;
        return false;
    }
    return true;
}

/* A UTF-16 string as UTF-8 into out (size bytes); false when it does not fit. */
static bool narrow_into(const wchar_t *w, char *out, size_t size)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, out, (int)(size < INT32_MAX ? size : INT32_MAX), NULL, NULL);
    return n > 0;
}

static char *narrow(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    char *s = n > 0 ? malloc((size_t)n) : NULL;
    if (s && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) <= 0) {
        free(s);
        s = NULL;
    }
    if (!s)
        errno = n > 0 ? ENOMEM : EILSEQ;
    return s;
}

/* Folder separators as '/' in a path plush got from Windows: plush's own path code splits at '/' (and
 * Windows takes '/' in every call). */
static char *forward_slashes(char *s)
{
    for (char *c = s; c && *c; c++)
        if (*c == '\\')
            *c = '/';
    return s;
}

/* The errno a Win32 error means (what the POSIX half's callers print with strerror). */
static int errno_of(DWORD e)
{
    switch (e) {
    case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: case ERROR_INVALID_NAME: case ERROR_BAD_NETPATH:
        return ENOENT;
    case ERROR_ACCESS_DENIED: case ERROR_SHARING_VIOLATION: case ERROR_LOCK_VIOLATION: return EACCES;
    case ERROR_ALREADY_EXISTS: case ERROR_FILE_EXISTS: return EEXIST;
    case ERROR_DIR_NOT_EMPTY: return ENOTEMPTY;
    case ERROR_NOT_SAME_DEVICE: return EXDEV;
    case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL: return ENOSPC;
    case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY: return ENOMEM;
    case ERROR_FILENAME_EXCED_RANGE: return ENAMETOOLONG;
    case ERROR_DIRECTORY: return ENOTDIR;
    case ERROR_BROKEN_PIPE: case ERROR_NO_DATA: return EPIPE;
    default: return EIO;
    }
}

static int fail_win32(void)
{
    errno = errno_of(GetLastError());
    return -1;
}

/* ---- files and folders ------------------------------------------------------------------------ */

/* Path opened for its attributes only, shared every way: a file another program holds open is still seen.
 * BACKUP_SEMANTICS opens folders; OPEN_REPARSE_POINT looks at a link itself. INVALID_HANDLE_VALUE when it
 * cannot be; *named false when the name itself is not a path Windows takes (errno set by widen_into). */
static HANDLE open_attributes(const char *path, bool follow, bool *named)
{
    wchar_t w[WPATH];
    *named = widen_into(path, w);
    if (!*named)
        return INVALID_HANDLE_VALUE;
    return CreateFileW(w, FILE_READ_ATTRIBUTES, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                       OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS | (follow ? 0 : FILE_FLAG_OPEN_REPARSE_POINT), NULL);
}

bool plush__os_stat(const char *path, bool follow, plush__os_info *out)
{
    *out = (plush__os_info){0};
    bool named;
    HANDLE h = open_attributes(path, follow, &named);
    if (!named)
        return false;
    if (h == INVALID_HANDLE_VALUE)
        return fail_win32(), false;
    DWORD type = GetFileType(h);
    BY_HANDLE_FILE_INFORMATION fi;
    if (type == FILE_TYPE_CHAR || type == FILE_TYPE_PIPE) {
        CloseHandle(h);
        out->kind = PLUSH__OS_STREAM;
        return true;
    }
    bool ok = GetFileInformationByHandle(h, &fi) != 0;
    if (!ok)
        fail_win32();
    CloseHandle(h);
    if (!ok)
        return false;
    /* FILETIME counts 100 ns since 1601; the POSIX half's seconds count from 1970 */
    uint64_t t = ((uint64_t)fi.ftLastWriteTime.dwHighDateTime << 32) | fi.ftLastWriteTime.dwLowDateTime;
    out->sec = (int64_t)(t / 10000000u) - INT64_C(11644473600);
    out->nsec = (long)(t % 10000000u) * 100;
    out->size = ((uint64_t)fi.nFileSizeHigh << 32) | fi.nFileSizeLow;
    out->dev = fi.dwVolumeSerialNumber;
    out->ino = ((uint64_t)fi.nFileIndexHigh << 32) | fi.nFileIndexLow;
    out->kind = !follow && (fi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) ? PLUSH__OS_LINK
              : (fi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ? PLUSH__OS_DIR : PLUSH__OS_FILE;
    if (out->kind != PLUSH__OS_FILE)
        out->size = 0;
    return true;
}

bool plush__os_fstat(int fd, plush__os_info *out)
{
    *out = (plush__os_info){0};
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE)
        return errno = EBADF, false;
    DWORD type = GetFileType(h);
    if (type == FILE_TYPE_CHAR || type == FILE_TYPE_PIPE) {
        out->kind = PLUSH__OS_STREAM;
        return true;
    }
    BY_HANDLE_FILE_INFORMATION fi;
    if (!GetFileInformationByHandle(h, &fi))
        return fail_win32(), false;
    out->kind = (fi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) ? PLUSH__OS_DIR : PLUSH__OS_FILE;
    out->size = ((uint64_t)fi.nFileSizeHigh << 32) | fi.nFileSizeLow;
    return true;
}

/* Every file plush opens is shared for deletion too (the C runtime's _wopen shares reading and writing only):
 * a cleanup after a Ctrl+C can then delete a file whose handle the suspended main thread still holds -- one
 * it had opened and not yet handed to the runtime, which close_disk_files below cannot see. Windows deletes
 * it when that handle closes, as the process ends (the lock was left so, once in CI, when the event landed
 * as the run read its own lock to let it go). */
static int open_shared(const char *path, DWORD access, DWORD disposition, int flags)
{
    wchar_t w[WPATH];
    if (!widen_into(path, w))
        return -1;
    HANDLE h = CreateFileW(w, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, disposition,
                           FILE_ATTRIBUTE_NORMAL, NULL);
    if (h == INVALID_HANDLE_VALUE)
        return fail_win32();
    int fd = _open_osfhandle((intptr_t)h, flags | _O_BINARY);
    if (fd < 0) {
        CloseHandle(h);
        errno = EMFILE;
    }
    return fd;
}

int plush__os_open_read(const char *path)
{
    return open_shared(path, GENERIC_READ, OPEN_EXISTING, _O_RDONLY);
}

int plush__os_open_write(const char *path, bool truncate)
{
    return open_shared(path, GENERIC_WRITE, truncate ? TRUNCATE_EXISTING : OPEN_EXISTING, _O_WRONLY);
}

int plush__os_create_new(const char *path)
{
    return open_shared(path, GENERIC_WRITE, CREATE_NEW, _O_WRONLY);
}

FILE *plush__os_fopen(const char *path, const char *mode)
{
    if (mode[0] != 'r' || strchr(mode, '+')) { /* writing: the runtime's own */
        wchar_t w[WPATH], m[16];
        if (!widen_into(path, w) || MultiByteToWideChar(CP_UTF8, 0, mode, -1, m, 16) <= 0)
            return NULL;
        return _wfopen(w, m);
    }
    int fd = plush__os_open_read(path);
    FILE *f = fd >= 0 ? _fdopen(fd, "rb") : NULL;
    if (fd >= 0 && !f)
        _close(fd);
    return f;
}

/* Fills the template's XXXXXX with letters and digits no other call of this process made. */
static bool fill_template(char *templ)
{
    static atomic_uint counter;
    size_t n = strlen(templ);
    if (n < 6 || strcmp(templ + n - 6, "XXXXXX") != 0) {
        errno = EINVAL;
        return false;
    }
    static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t v = ((uint64_t)GetCurrentProcessId() << 32) ^ (uint64_t)GetTickCount64() * 2654435761u ^
                 (uint64_t)atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ull;
    for (size_t i = n - 6; i < n; i++, v /= 36)
        templ[i] = set[v % 36];
    return true;
}

int plush__os_mkstemp(char *templ)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        if (!fill_template(templ))
            return -1;
        int fd = plush__os_create_new(templ);
        if (fd >= 0 || errno != EEXIST)
            return fd;
        memcpy(templ + strlen(templ) - 6, "XXXXXX", 6);
    }
    errno = EEXIST;
    return -1;
}

bool plush__os_mkdtemp(char *templ)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        if (!fill_template(templ))
            return false;
        if (plush__os_mkdir(templ) == 0)
            return true;
        if (errno != EEXIST)
            return false;
        memcpy(templ + strlen(templ) - 6, "XXXXXX", 6);
    }
    errno = EEXIST;
    return false;
}

int plush__os_mkdir(const char *path)
{
    wchar_t w[WPATH];
    if (!widen_into(path, w))
        return -1;
    return CreateDirectoryW(w, NULL) ? 0 : fail_win32();
}

int plush__os_rmdir(const char *path)
{
    wchar_t w[WPATH];
    if (!widen_into(path, w))
        return -1;
    return RemoveDirectoryW(w) ? 0 : fail_win32();
}

int plush__os_unlink(const char *path)
{
    wchar_t w[WPATH];
    if (!widen_into(path, w))
        return -1;
    return DeleteFileW(w) ? 0 : fail_win32();
}

int plush__os_rename(const char *from, const char *to)
{
    wchar_t a[WPATH], b[WPATH];
    if (!widen_into(from, a) || !widen_into(to, b))
        return -1;
    /* one step that replaces an existing file (never a folder), flushed before it returns */
    return MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0 : fail_win32();
}

int plush__os_move_noreplace(const char *from, const char *to)
{
    wchar_t a[WPATH], b[WPATH];
    if (!widen_into(from, a) || !widen_into(to, b))
        return -1;
    return MoveFileExW(a, b, MOVEFILE_WRITE_THROUGH) ? 0 : fail_win32();
}

/* The final path of an open handle as UTF-8 without the "\\?\" prefix (malloc'd). */
static char *final_path(HANDLE h)
{
    wchar_t w[WPATH];
    DWORD n = GetFinalPathNameByHandleW(h, w, WPATH, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS);
    if (n == 0 || n >= WPATH) {
        fail_win32();
        return NULL;
    }
    const wchar_t *p = w;
    if (wcsncmp(p, L"\\\\?\\UNC\\", 8) == 0) {
        p += 6;
        w[6] = L'\\'; /* "\\?\UNC\server" -> "\\server" */
    } else if (wcsncmp(p, L"\\\\?\\", 4) == 0) {
        p += 4;
    }
    return forward_slashes(narrow(p));
}

static char *resolve(const char *path, bool follow)
{
    bool named;
    HANDLE h = open_attributes(path, follow, &named);
    if (!named)
        return NULL;
    if (h == INVALID_HANDLE_VALUE) {
        fail_win32();
        return NULL;
    }
    char *r = final_path(h);
    CloseHandle(h);
    return r;
}

char *plush__os_readlink(const char *path)
{
    /* A Windows link (a reparse point) is read as where it finally leads: an absolute path. */
    plush__os_info st;
    if (!plush__os_stat(path, false, &st))
        return NULL;
    if (st.kind != PLUSH__OS_LINK) {
        errno = EINVAL;
        return NULL;
    }
    return resolve(path, true);
}

char *plush__os_realpath(const char *path)
{
    return resolve(path, true);
}

char *plush__os_getcwd(void)
{
    wchar_t w[WPATH];
    DWORD n = GetCurrentDirectoryW(WPATH, w);
    if (n == 0 || n >= WPATH) {
        fail_win32();
        return NULL;
    }
    return forward_slashes(narrow(w));
}

bool plush__os_absolute(const char *path)
{
    bool sep0 = path[0] == '/' || path[0] == '\\';
    bool drive = ((path[0] | 32) >= 'a' && (path[0] | 32) <= 'z') && path[1] == ':' &&
                 (path[2] == '/' || path[2] == '\\');
    return sep0 || drive;
}

double plush__os_disk_free(const char *dir)
{
    wchar_t w[WPATH];
    ULARGE_INTEGER avail;
    if (!dir || !widen_into(dir, w) || !GetDiskFreeSpaceExW(w, &avail, NULL, NULL))
        return 0;
    return (double)avail.QuadPart;
}

const void *plush__os_map(int fd, size_t size)
{
    HANDLE h = (HANDLE)_get_osfhandle(fd);
    if (h == INVALID_HANDLE_VALUE || size == 0)
        return NULL;
    HANDLE m = CreateFileMappingW(h, NULL, PAGE_READONLY, 0, 0, NULL);
    if (!m)
        return NULL;
    const void *view = MapViewOfFile(m, FILE_MAP_READ, 0, 0, size);
    CloseHandle(m); /* the view keeps the mapping */
    return view;
}

void plush__os_unmap(const void *data, size_t size)
{
    (void)size;
    UnmapViewOfFile(data);
}

double plush__os_memory_available(void)
{
    MEMORYSTATUSEX m = {.dwLength = sizeof m};
    return GlobalMemoryStatusEx(&m) ? (double)m.ullAvailPhys : 0;
}

void plush__os_share_mode(int fd)
{
    (void)fd; /* a new file takes its folder's permissions on Windows */
}

struct plush__os_dir {
    HANDLE find;
    bool first;
    WIN32_FIND_DATAW data;
    char name[WPATH * 3];
};

plush__os_dir *plush__os_dir_open(const char *path)
{
    wchar_t w[WPATH];
    if (!widen_into(path, w))
        return NULL;
    size_t n = wcslen(w);
    if (n + 3 > WPATH) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    wcscpy(w + n, n && (w[n - 1] == L'/' || w[n - 1] == L'\\') ? L"*" : L"\\*");
    plush__os_dir *d = malloc(sizeof *d);
    if (!d) {
        errno = ENOMEM;
        return NULL;
    }
    d->find = FindFirstFileW(w, &d->data);
    if (d->find == INVALID_HANDLE_VALUE) {
        fail_win32();
        free(d);
        return NULL;
    }
    d->first = true;
    return d;
}

const char *plush__os_dir_next(plush__os_dir *d)
{
    for (;;) {
        if (!d->first && !FindNextFileW(d->find, &d->data))
            return NULL;
        d->first = false;
        if (wcscmp(d->data.cFileName, L".") == 0 || wcscmp(d->data.cFileName, L"..") == 0)
            continue;
        if (narrow_into(d->data.cFileName, d->name, sizeof d->name))
            return d->name;
    }
}

void plush__os_dir_close(plush__os_dir *d)
{
    if (!d)
        return;
    FindClose(d->find);
    free(d);
}

/* Wide paths on the stack only: the console handler's cleanup may not wait for a heap another thread
 * holds. */
static void remove_tree_w(wchar_t *path, size_t len, int depth)
{
    DWORD attr = GetFileAttributesW(path);
    if (attr == INVALID_FILE_ATTRIBUTES)
        return;
    if (!(attr & FILE_ATTRIBUTE_DIRECTORY) || (attr & FILE_ATTRIBUTE_REPARSE_POINT)) {
        if (attr & FILE_ATTRIBUTE_READONLY)
            SetFileAttributesW(path, attr & ~(DWORD)FILE_ATTRIBUTE_READONLY);
        if (!DeleteFileW(path))
            RemoveDirectoryW(path); /* a link to a folder */
        return;
    }
    if (depth > 0 && len + 3 < WPATH) {
        wcscpy(path + len, L"\\*");
        WIN32_FIND_DATAW fd;
        HANDLE h = FindFirstFileW(path, &fd);
        if (h != INVALID_HANDLE_VALUE) {
            do {
                if (wcscmp(fd.cFileName, L".") == 0 || wcscmp(fd.cFileName, L"..") == 0)
                    continue;
                size_t k = wcslen(fd.cFileName);
                if (len + 1 + k + 1 > WPATH)
                    continue;
                path[len] = L'\\';
                wcscpy(path + len + 1, fd.cFileName);
                remove_tree_w(path, len + 1 + k, depth - 1);
            } while (FindNextFileW(h, &fd));
            FindClose(h);
        }
        path[len] = L'\0';
    }
    RemoveDirectoryW(path);
}

void plush__os_remove_tree(const char *path, int depth)
{
    wchar_t w[WPATH];
    if (widen_into(path, w))
        remove_tree_w(w, wcslen(w), depth);
}

/* ---- the process ------------------------------------------------------------------------------ */

long plush__os_pid(void)
{
    return (long)GetCurrentProcessId();
}

bool plush__os_process_alive(long pid)
{
    HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
    if (!h)
        return GetLastError() != ERROR_INVALID_PARAMETER; /* denied: it exists */
    DWORD code = 0;
    bool alive = GetExitCodeProcess(h, &code) && code == STILL_ACTIVE;
    CloseHandle(h);
    return alive;
}

void plush__os_setenv(const char *name, const char *value)
{
    _putenv_s(name, value); /* the C runtime's copy, which getenv reads */
}

bool plush__os_stderr_is_terminal(void)
{
    DWORD mode;
    return GetConsoleMode(GetStdHandle(STD_ERROR_HANDLE), &mode) != 0;
}

bool plush__os_exe_dir(char *out, size_t size)
{
    wchar_t w[WPATH];
    DWORD n = GetModuleFileNameW(NULL, w, WPATH);
    if (n == 0 || n >= WPATH)
        return false;
    wchar_t *slash = wcsrchr(w, L'\\'), *fwd = wcsrchr(w, L'/');
    if (fwd > slash)
        slash = fwd;
    if (!slash)
        return false;
    *slash = L'\0';
    if (!narrow_into(w, out, size))
        return false;
    forward_slashes(out);
    return true;
}

/* The interruption: Windows has no SIGINT to interrupt a thread with; Ctrl+C, Ctrl+Break and closing the
 * console call the handler on a new thread while the pipeline goes on. The handler suspends the main thread
 * where it stands, cleans up -- finishing a commit under way, as the POSIX half does on the main thread --
 * and ends the process with the status Ctrl+C gives. A thread that holds interruptions off
 * (plush__os_hold_interrupts) keeps the handler waiting until it is done.
 *
 * A thread suspended inside a lock of the system's keeps it: the cleanup's file calls then wait for it
 * forever. The two they are known to take are taken by the handler before it suspends and let go after, so
 * the main thread is never stopped holding one: the process heap's (the path calls allocate from it) and the
 * PEB's (every path Windows turns into an NT path is read under it, with the current folder; a Ctrl+C that
 * landed while the main thread opened a file hung the run, once in CI). For any other, the cleanup runs on a
 * thread of its own, and the handler watches it: when it has not finished in CLEANUP_WAIT_MS the main thread
 * is let go on (it leaves the lock, and cannot commit: the handler holds interruptions), and the process ends
 * CLEANUP_LAST_MS later whatever is done. A staging folder left then is removed by the next run into the
 * folder, with a warning. */
enum { CLEANUP_WAIT_MS = 3000, CLEANUP_LAST_MS = 10000 };
static HANDLE guard_owner;
static atomic_bool guard_cleaning;
static void (*_Atomic guard_cleanup)(void);
static SRWLOCK guard_hold = SRWLOCK_INIT;
typedef void(WINAPI *peb_lock_fn)(void);
static peb_lock_fn peb_acquire, peb_release; /* ntdll's RtlAcquirePebLock and RtlReleasePebLock */

static void ignore_invalid_parameter(const wchar_t *expression, const wchar_t *function, const wchar_t *file,
                                     unsigned int line, uintptr_t reserved)
{
    (void)expression, (void)function, (void)file, (void)line, (void)reserved;
}

/* A file the suspended thread has open keeps its staging folder from being removed: Windows deletes no file
 * another handle holds open without share-delete, and the C runtime opens none so (a Ctrl+C while a frame was
 * being written left the folder behind). The process ends right after the cleanup, so every descriptor of the
 * runtime that names a file on disk is closed at its handle first (not through the runtime, whose lock on the
 * descriptor the suspended thread may hold). */
static void close_disk_files(void)
{
    _set_invalid_parameter_handler(ignore_invalid_parameter); /* a descriptor never opened is no fault here */
    for (int fd = 3; fd < 8192; fd++) {
        intptr_t h = _get_osfhandle(fd);
        if (h != -1 && h != -2 && GetFileType((HANDLE)h) == FILE_TYPE_DISK)
            CloseHandle((HANDLE)h);
    }
}

static HANDLE cleanup_go;

static DWORD WINAPI cleanup_thread(void *arg)
{
    (void)arg;
    WaitForSingleObject(cleanup_go, INFINITE);
    if (guard_owner)
        close_disk_files();
    void (*cleanup)(void) = atomic_load(&guard_cleanup);
    if (cleanup)
        cleanup();
    return 0;
}

static void guard_run(void)
{
    AcquireSRWLockExclusive(&guard_hold);
    /* the cleanup's thread is started before the main thread stops: a new thread's start takes the loader's
     * lock, which the main thread may hold */
    cleanup_go = CreateEventW(NULL, TRUE, FALSE, NULL);
    HANDLE worker = cleanup_go ? CreateThread(NULL, 0, cleanup_thread, NULL, 0, NULL) : NULL;
    bool peb = peb_acquire && peb_release;
    if (peb)
        peb_acquire();
    HANDLE heap = GetProcessHeap();
    bool locked = HeapLock(heap) != 0;
    bool suspended = guard_owner && SuspendThread(guard_owner) != (DWORD)-1;
    if (locked)
        HeapUnlock(heap);
    if (peb)
        peb_release();
    if (!worker) { /* no thread to spare: clean up here, unwatched */
        if (cleanup_go)
            SetEvent(cleanup_go);
        cleanup_thread(NULL);
        return;
    }
    SetEvent(cleanup_go);
    if (WaitForSingleObject(worker, CLEANUP_WAIT_MS) == WAIT_TIMEOUT) {
        if (suspended)
            ResumeThread(guard_owner);
        WaitForSingleObject(worker, CLEANUP_LAST_MS);
    }
}

static BOOL WINAPI guard_console(DWORD event)
{
    (void)event;
    if (atomic_exchange(&guard_cleaning, true)) {
        Sleep(INFINITE); /* the first one ends the process */
        return TRUE;
    }
    guard_run();
    TerminateProcess(GetCurrentProcess(), (UINT)STATUS_CONTROL_C_EXIT);
    return TRUE;
}

static LONG WINAPI guard_crash(EXCEPTION_POINTERS *info)
{
    (void)info;
    if (!atomic_exchange(&guard_cleaning, true)) {
        void (*cleanup)(void) = atomic_load(&guard_cleanup);
        if (cleanup)
            cleanup();
    }
    return EXCEPTION_CONTINUE_SEARCH;
}

bool plush__os_on_interrupt(void (*cleanup)(void))
{
    atomic_store(&guard_cleanup, cleanup);
    if (!guard_owner && !DuplicateHandle(GetCurrentProcess(), GetCurrentThread(), GetCurrentProcess(), &guard_owner,
                                         THREAD_SUSPEND_RESUME, FALSE, 0))
        guard_owner = NULL;
    HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
    if (ntdll && !peb_acquire) { /* resolved here: looking a name up takes the loader's lock */
        peb_acquire = (peb_lock_fn)(void (*)(void))GetProcAddress(ntdll, "RtlAcquirePebLock");
        peb_release = (peb_lock_fn)(void (*)(void))GetProcAddress(ntdll, "RtlReleasePebLock");
    }
    SetUnhandledExceptionFilter(guard_crash);
    return SetConsoleCtrlHandler(guard_console, TRUE) != 0;
}

void plush__os_hold_interrupts(plush__os_held *h)
{
    AcquireSRWLockShared(&guard_hold);
    h->held = true;
}

void plush__os_release_interrupts(plush__os_held *h)
{
    if (h->held)
        ReleaseSRWLockShared(&guard_hold);
    h->held = false;
}

/* ---- libraries -------------------------------------------------------------------------------- */

void *plush__os_library_open(const char *name, char *err, size_t size, bool *missing)
{
    *missing = false;
    wchar_t w[WPATH];
    if (!widen_into(name, w)) {
        snprintf(err, size, "not a UTF-8 name");
        return NULL;
    }
    bool path = strpbrk(name, "/\\") != NULL;
    if (path && GetFileAttributesW(w) == INVALID_FILE_ATTRIBUTES) {
        snprintf(err, size, "not found");
        *missing = true;
        return NULL;
    }
    /* a library by path finds its own dependencies beside it */
    HMODULE h = LoadLibraryExW(w, NULL, path ? LOAD_WITH_ALTERED_SEARCH_PATH : 0);
    if (!h) {
        DWORD e = GetLastError();
        *missing = e == ERROR_MOD_NOT_FOUND && !path;
        char text[200] = "";
        FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0, text, sizeof text, NULL);
        text[strcspn(text, "\r\n")] = '\0';
        snprintf(err, size, "%s: %s (error %lu)", name, text[0] ? text : "cannot load", (unsigned long)e);
    }
    return h;
}

void *plush__os_library_symbol(void *lib, const char *symbol)
{
    FARPROC f = GetProcAddress((HMODULE)lib, symbol);
    void *p;
    memcpy(&p, &f, sizeof p);
    return p;
}

void plush__os_library_close(void *lib)
{
    FreeLibrary((HMODULE)lib);
}

/* ---- child processes -------------------------------------------------------------------------- */

static bool is_file_w(const wchar_t *w)
{
    DWORD a = GetFileAttributesW(w);
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

bool plush__os_find_program(const char *program, char *out, size_t size)
{
    /* beside plush.exe first (where the Windows zip's README says ffmpeg.exe may go), then PATH */
    char dir[WPATH];
    if (plush__os_exe_dir(dir, sizeof dir)) {
        int len = snprintf(out, size, "%s\\%s.exe", dir, program);
        wchar_t w[WPATH];
        if (len > 0 && (size_t)len < size && widen_into(out, w) && is_file_w(w))
            return true;
    }
    wchar_t name[64], found[WPATH];
    if (MultiByteToWideChar(CP_UTF8, 0, program, -1, name, 64) <= 0)
        return false;
    DWORD n = SearchPathW(NULL, name, L".exe", WPATH, found, NULL);
    return n > 0 && n < WPATH && is_file_w(found) && narrow_into(found, out, size);
}

/* Appends one argument to a command line so that the child's CommandLineToArgvW (the C runtime's rule)
 * gives it back unchanged: quoted when it has blanks or quotes or is empty; a run of backslashes doubled
 * where a quote follows it. */
static bool quote_arg(wchar_t *line, size_t *at, size_t cap, const wchar_t *arg)
{
    size_t k = *at;
#define PUT(c)                                                                                                   \
    do {                                                                                                         \
        if (k + 1 >= cap)                                                                                        \
            return false;                                                                                        \
        line[k++] = (c);                                                                                         \
    } while (0)
    if (k)
        PUT(L' ');
    bool plain = arg[0] && !wcspbrk(arg, L" \t\n\v\"");
    if (plain) {
        for (const wchar_t *p = arg; *p; p++)
            PUT(*p);
    } else {
        PUT(L'"');
        for (const wchar_t *p = arg;; p++) {
            size_t slashes = 0;
            while (*p == L'\\')
                p++, slashes++;
            if (!*p) {
                for (size_t i = 0; i < slashes * 2; i++)
                    PUT(L'\\');
                break;
            }
            if (*p == L'"') {
                for (size_t i = 0; i < slashes * 2 + 1; i++)
                    PUT(L'\\');
                PUT(L'"');
            } else {
                for (size_t i = 0; i < slashes; i++)
                    PUT(L'\\');
                PUT(*p);
            }
        }
        PUT(L'"');
    }
#undef PUT
    line[k] = L'\0';
    *at = k;
    return true;
}

int plush__os_child_start(const char *program, const char *const *argv, FILE *log, plush__os_child *out)
{
    *out = (plush__os_child){0, -1};
    enum { LINE = 32768 };
    wchar_t *line = malloc(LINE * sizeof *line), prog[WPATH];
    if (!line)
        return ENOMEM;
    size_t at = 0;
    line[0] = L'\0';
    bool ok = widen_into(program, prog);
    for (size_t i = 0; ok && argv[i]; i++) {
        wchar_t w[WPATH];
        ok = widen_into(argv[i], w) && quote_arg(line, &at, LINE, w);
    }
    if (!ok) {
        free(line);
        return E2BIG;
    }
    SECURITY_ATTRIBUTES inherit = {.nLength = sizeof inherit, .bInheritHandle = TRUE};
    HANDLE rd, wr;
    if (!CreatePipe(&rd, &wr, &inherit, 1 << 20)) {
        free(line);
        return errno_of(GetLastError());
    }
    SetHandleInformation(wr, HANDLE_FLAG_INHERIT, 0);
    HANDLE nul = CreateFileW(L"NUL", GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0,
                             NULL);
    HANDLE err = nul;
    if (log) {
        fflush(log);
        HANDLE lh = (HANDLE)_get_osfhandle(_fileno(log));
        if (lh != INVALID_HANDLE_VALUE &&
            DuplicateHandle(GetCurrentProcess(), lh, GetCurrentProcess(), &err, 0, TRUE, DUPLICATE_SAME_ACCESS))
            ;
        else
            err = nul;
    }
    STARTUPINFOW si = {.cb = sizeof si, .dwFlags = STARTF_USESTDHANDLES, .hStdInput = rd, .hStdOutput = nul,
                       .hStdError = err};
    PROCESS_INFORMATION pi;
    BOOL made = CreateProcessW(prog, line, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi);
    DWORD e = GetLastError();
    free(line);
    CloseHandle(rd);
    if (nul != INVALID_HANDLE_VALUE)
        CloseHandle(nul);
    if (err != nul)
        CloseHandle(err);
    if (!made) {
        CloseHandle(wr);
        return errno_of(e);
    }
    CloseHandle(pi.hThread);
    int fd = _open_osfhandle((intptr_t)wr, _O_WRONLY | _O_BINARY);
    if (fd < 0) {
        CloseHandle(wr);
        TerminateProcess(pi.hProcess, 1);
        CloseHandle(pi.hProcess);
        return EMFILE;
    }
    *out = (plush__os_child){(intptr_t)pi.hProcess, fd};
    return 0;
}

bool plush__os_child_write(plush__os_child *c, const void *buf, size_t size)
{
    if (c->input < 0)
        return false;
    const uint8_t *p = buf;
    for (size_t done = 0; done < size;) {
        size_t chunk = size - done < (1u << 30) ? size - done : (1u << 30);
        int w = _write(c->input, p + done, (unsigned)chunk);
        if (w <= 0)
            return false; /* a broken pipe is an error here, never a signal */
        done += (size_t)w;
    }
    return true;
}

bool plush__os_child_wait(plush__os_child *c)
{
    if (c->input >= 0)
        _close(c->input);
    c->input = -1;
    if (!c->handle)
        return false;
    HANDLE h = (HANDLE)c->handle;
    DWORD code = 1;
    bool ok = WaitForSingleObject(h, INFINITE) == WAIT_OBJECT_0 && GetExitCodeProcess(h, &code) && code == 0;
    CloseHandle(h);
    c->handle = 0;
    return ok;
}

void plush__os_child_stop(plush__os_child *c)
{
    if (c->handle)
        TerminateProcess((HANDLE)c->handle, 1);
    plush__os_child_wait(c);
}

/* ---- text ------------------------------------------------------------------------------------- */

/* Code page 932 is always there on Windows; the handle only keeps the interface the POSIX half needs. */
struct plush__os_cp932 {
    int unused;
};

plush__os_cp932 *plush__os_cp932_open(void)
{
    CPINFO info;
    return GetCPInfo(932, &info) ? calloc(1, sizeof(plush__os_cp932)) : NULL;
}

void plush__os_cp932_close(plush__os_cp932 *c)
{
    free(c);
}

static size_t cp932_char_len(uint8_t b)
{
    return ((b >= 0x81 && b <= 0x9F) || (b >= 0xE0 && b <= 0xFC)) ? 2 : 1;
}

size_t plush__os_cp932_decode(plush__os_cp932 *c, const uint8_t *src, size_t n, char *out, size_t cap, bool *bad)
{
    (void)c;
    size_t o = 0;
    /* one character at a time, as iconv goes: a byte that starts none is U+FFFD and the next byte is tried */
    for (size_t i = 0; i < n;) {
        size_t k = cp932_char_len(src[i]);
        if (i + k > n) { /* cut by the field's end */
            *bad = true;
            break;
        }
        wchar_t w[2];
        int m = MultiByteToWideChar(932, MB_ERR_INVALID_CHARS, (const char *)src + i, (int)k, w, 2);
        char u[8];
        int un = m > 0 ? WideCharToMultiByte(CP_UTF8, 0, w, m, u, sizeof u, NULL, NULL) : 0;
        if (un <= 0) {
            memcpy(u, "\xEF\xBF\xBD", 3);
            un = 3;
            k = 1;
            *bad = true;
        }
        if (o + (size_t)un > cap)
            break;
        memcpy(out + o, u, (size_t)un);
        o += (size_t)un;
        i += k;
    }
    return o;
}

bool plush__os_cp932_encode(plush__os_cp932 *c, const char *s, size_t len, uint8_t *out, size_t cap, size_t *n)
{
    (void)c;
    *n = 0;
    if (len == 0)
        return true;
    if (len > INT32_MAX / 2)
        return false;
    wchar_t small[128], *w = len <= 128 ? small : malloc(len * sizeof *w);
    if (!w)
        return false;
    int m = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, (int)len, w, (int)len);
    BOOL lost = FALSE;
    int k = m > 0 ? WideCharToMultiByte(932, WC_NO_BEST_FIT_CHARS, w, m, (char *)out,
                                        (int)(cap < INT32_MAX ? cap : INT32_MAX), NULL, &lost)
                  : 0;
    if (w != small)
        free(w);
    if (k <= 0 || lost)
        return false;
    *n = (size_t)k;
    return true;
}

/* ---- the command line ------------------------------------------------------------------------- */

bool plush__os_args_utf8(int argc, char **argv, int *out_argc, char ***out_argv)
{
    *out_argc = argc;
    *out_argv = argv;
    /* messages are UTF-8: the console shows them as such */
    SetConsoleOutputCP(CP_UTF8);
    int n = 0;
    wchar_t **w = CommandLineToArgvW(GetCommandLineW(), &n);
    if (!w)
        return false;
    char **a = calloc((size_t)n + 1, sizeof *a);
    bool ok = a != NULL;
    for (int i = 0; ok && i < n; i++)
        ok = (a[i] = narrow(w[i])) != NULL;
    LocalFree(w);
    if (!ok) {
        for (int i = 0; a && i < n; i++)
            free(a[i]);
        free(a);
        return false;
    }
    *out_argc = n;
    *out_argv = a;
    return true;
}
