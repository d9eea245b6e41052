/* Private to src/render: stb's headers compiled without the project's warnings (they are not our code),
 * wrapped as PLUSH_STB_QUIET_BEGIN #include <stb/...> PLUSH_STB_QUIET_END. */
#ifndef PLUSH_RENDER_STB_QUIET_H
#define PLUSH_RENDER_STB_QUIET_H

#if defined(__GNUC__)
#define PLUSH_STB_QUIET_BEGIN \
    _Pragma("GCC diagnostic push") \
    _Pragma("GCC diagnostic ignored \"-Wall\"") \
    _Pragma("GCC diagnostic ignored \"-Wextra\"") \
    _Pragma("GCC diagnostic ignored \"-Wpedantic\"") \
    _Pragma("GCC diagnostic ignored \"-Wshadow\"") \
    _Pragma("GCC diagnostic ignored \"-Wunused-function\"") \
    _Pragma("GCC diagnostic ignored \"-Wsign-compare\"") \
    _Pragma("GCC diagnostic ignored \"-Wconversion\"")
#define PLUSH_STB_QUIET_END _Pragma("GCC diagnostic pop")
#else
#define PLUSH_STB_QUIET_BEGIN
#define PLUSH_STB_QUIET_END
#endif

#endif
