// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html).
// Under clang with -Wthread-safety (scripts/thread_safety.sh builds that way) they let the
// compiler prove that every access to a GUARDED_BY field holds its mutex; under other compilers
// they expand to nothing.
//
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   void AddLocked() REQUIRES(mu_);     // callers hold mu_
//   void Add() EXCLUDES(mu_);           // callers must not hold mu_ (it takes it)
//
// std::mutex carries no annotations in libstdc++, so annotated code locks util/mutex.h's
// Mutex with a MutexLock.
#pragma once

#if defined(__clang__)
#define RADIXLM_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define RADIXLM_THREAD_ANNOTATION(x)
#endif

// A type that is a lock (Mutex).
#define CAPABILITY(x) RADIXLM_THREAD_ANNOTATION(capability(x))
// An RAII type that holds a lock for its lifetime (MutexLock).
#define SCOPED_CAPABILITY RADIXLM_THREAD_ANNOTATION(scoped_lockable)

// The field may be read or written only while holding x.
#define GUARDED_BY(x) RADIXLM_THREAD_ANNOTATION(guarded_by(x))
// The data the pointer points to (not the pointer) is guarded by x.
#define PT_GUARDED_BY(x) RADIXLM_THREAD_ANNOTATION(pt_guarded_by(x))

// Lock order: this mutex is taken before / after the named ones.
#define ACQUIRED_BEFORE(...) RADIXLM_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) RADIXLM_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// The function must be called holding (REQUIRES) / not holding (EXCLUDES) the named locks.
#define REQUIRES(...) RADIXLM_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) RADIXLM_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) RADIXLM_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// The function takes / releases the named locks (no argument: `this`).
#define ACQUIRE(...) RADIXLM_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) RADIXLM_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) RADIXLM_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) RADIXLM_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) RADIXLM_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))

// The function checks (or asserts) that the caller holds x; the analysis takes it as held.
#define ASSERT_CAPABILITY(x) RADIXLM_THREAD_ANNOTATION(assert_capability(x))
// The function returns a reference to the lock x.
#define RETURN_CAPABILITY(x) RADIXLM_THREAD_ANNOTATION(lock_returned(x))

// Turns the analysis off for one function (say why where it is used).
#define NO_THREAD_SAFETY_ANALYSIS RADIXLM_THREAD_ANNOTATION(no_thread_safety_analysis)
