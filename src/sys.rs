//! What the process asks of the operating system about its own memory: the resident set
//! size now and at its peak (read from `/proc/self/status`), how much more it may have
//! (its address-space limit, the system's available memory), and handing freed heap pages
//! back. Long solves report both at every large step, so a memory budget is checked while
//! it runs rather than after it fails; a large allocation that fails is an error naming
//! what it was for ([`vec_with_capacity`]), not an abort. Besides memory: the free space
//! of a disk, and a large file's writeback started while it is still being written
//! ([`start_writeback`]).

use crate::error::Error;

/// Resident set size now and at its peak, in bytes (`None` where `/proc` is not there).
pub fn rss() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Bytes this process may still map: its address-space limit (`ulimit -v`, RLIMIT_AS,
/// from `/proc/self/limits`) less what it maps now (VmSize). `None` when there is no
/// limit or it cannot be read.
pub fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max address space"))?;
    let limit: u64 = line["Max address space".len()..].split_whitespace().next()?.parse().ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let size = status.lines().find_map(|l| l.strip_prefix("VmSize:"))?;
    let size: u64 = size.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(limit.saturating_sub(size * 1024))
}

/// This process's address-space limit in bytes (`ulimit -v`, `RLIMIT_AS`, read with
/// `getrlimit`); `None` when there is none or it cannot be read.
pub fn address_space_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: `r` is a valid rlimit for getrlimit to fill.
        if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        // The field's type differs between platforms (u64 on Linux).
        #[allow(clippy::unnecessary_cast)]
        Some(r.rlim_cur as u64)
    }
    #[cfg(not(unix))]
    None
}

/// The address space glibc's allocator reserves for each heap it gives a thread of its
/// own (an arena, `HEAP_MAX_SIZE` on 64-bit: 64 MiB, mapped without access until used).
pub const MALLOC_ARENA_RESERVE: u64 = 64 << 20;

/// The size from which glibc's allocator maps each allocation by itself, under an
/// address-space limit ([`fit_malloc_to_limit`]).
pub const MALLOC_MMAP_THRESHOLD: usize = 256 << 10;

/// Under an address-space limit (`ulimit -v`), fit glibc's allocator to it, and return
/// how many per-thread heaps (arenas) it may make. It makes no more arenas than take
/// an eighth of the limit (at least the main one): by default every thread that
/// allocates gets one, up to 8 per core, and each reserves [`MALLOC_ARENA_RESERVE`];
/// under `ulimit -v 200000` the first two threads' reservations took 128 MiB of the
/// 195 MiB, and `ostledb serve` then aborted on an allocation of 16 bytes. Threads
/// share the heaps there are (more waiting on their locks). And an allocation of
/// [`MALLOC_MMAP_THRESHOLD`] or more is mapped by itself and unmapped when freed, always
/// (by default the threshold rises to the largest size freed, up to 32 MiB, and then
/// such blocks are cut from the heap, which freed holes leave larger than what is
/// live: a server under `ulimit -v 200000` answering lines of 277 KB ran out of room
/// with its heap at 128 MiB). Nothing changes without a limit or on another allocator
/// (`None`). Call it before threads are started.
pub fn fit_malloc_to_limit() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let limit = address_space_limit()?;
        let arenas = (limit / 8 / MALLOC_ARENA_RESERVE).max(1);
        // SAFETY: mallopt only sets tunables of the allocator; M_ARENA_MAX takes any
        // positive count, M_MMAP_THRESHOLD any size up to 32 MiB.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas.min(i32::MAX as u64) as libc::c_int);
            libc::mallopt(libc::M_MMAP_THRESHOLD, MALLOC_MMAP_THRESHOLD as libc::c_int);
        }
        Some(arenas)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Memory the system can still give without swapping (MemAvailable in `/proc/meminfo`),
/// `None` where it cannot be read.
pub fn memory_available() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = info.lines().find_map(|l| l.strip_prefix("MemAvailable:"))?;
    Some(kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok()? * 1024)
}

/// The least of [`address_space_left`] and [`memory_available`]: how much more memory
/// this process can count on (`None`: no bound known).
pub fn memory_headroom() -> Option<u64> {
    match (address_space_left(), memory_available()) {
        (Some(a), Some(m)) => Some(a.min(m)),
        (a, m) => a.or(m),
    }
}

/// Refuse `n` items of about `bytes_each` bytes (`what`: "a sample of 10 codes") that the
/// memory this process can count on ([`memory_headroom`]) does not hold, before any of
/// it is allocated: [`Error::OutOfMemory`] naming the most items that fit (`unit`:
/// "codes"). Where no bound is known (no `/proc`), only a size that overflows is refused.
/// A count a caller gives (a Python `sample`, `bench --lookups`) is checked with this so
/// that asking for too much is an error, not an abort or the kernel's OOM killer.
pub fn check_memory(what: &str, n: u64, bytes_each: u64, unit: &str) -> Result<(), Error> {
    let bytes = n.checked_mul(bytes_each).filter(|&b| b <= isize::MAX as u64);
    let headroom = memory_headroom();
    match (bytes, headroom) {
        (Some(b), Some(left)) if b <= left => Ok(()),
        (Some(_), None) => Ok(()),
        _ => Err(Error::OutOfMemory {
            what: what.to_string(),
            bytes: bytes.unwrap_or(u64::MAX),
            advice: match headroom {
                Some(left) => format!(
                    "this process can count on {} MB (its ulimit -v and the machine's available memory), enough for {} {unit} at about {bytes_each} bytes each",
                    left / 1_000_000,
                    left / bytes_each.max(1)
                ),
                None => format!("no machine has that much; ask for fewer {unit}"),
            },
        }),
    }
}

/// An empty vector with room for `n` elements, or, where the memory cannot be had,
/// [`Error::OutOfMemory`] saying it was for `what` and what to do (`advice`): a large
/// allocation that fails is then an error with exit code 2, not an abort of the process.
pub fn vec_with_capacity<T>(n: usize, what: &str, advice: &str) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| out_of_memory::<T>(n, what, advice))?;
    Ok(v)
}

fn out_of_memory<T>(n: usize, what: &str, advice: &str) -> Error {
    Error::OutOfMemory {
        what: what.to_string(),
        bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
        advice: advice.to_string(),
    }
}

/// Types whose all-zero bytes are the value 0.
///
/// # Safety
///
/// Implement only for types for which every all-zero byte pattern is a valid value.
pub unsafe trait ZeroIsValid {}
// SAFETY: atomic integers have the bit validity of their integer, for which zero is valid.
unsafe impl ZeroIsValid for std::sync::atomic::AtomicU8 {}
// SAFETY: as above.
unsafe impl ZeroIsValid for std::sync::atomic::AtomicU32 {}
// SAFETY: as above.
unsafe impl ZeroIsValid for std::sync::atomic::AtomicU64 {}

/// `n` zeros allocated zeroed by the allocator (fresh pages from the operating system
/// for a large array, so pages never written cost nothing), or, as
/// [`vec_with_capacity`], [`Error::OutOfMemory`].
pub fn zeroed_vec<T: ZeroIsValid>(n: usize, what: &str, advice: &str) -> Result<Vec<T>, Error> {
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| out_of_memory::<T>(n, what, advice))?;
    if layout.size() == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if ptr.is_null() {
        return Err(out_of_memory::<T>(n, what, advice));
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `n` values of `T`
    // (what a `Vec<T>` of capacity `n` uses), and all-zero bytes are a valid `T`.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// "RSS 12.3 GB (peak 14.1 GB)", or an empty string where it cannot be read.
pub fn rss_summary() -> String {
    match rss() {
        Some((now, peak)) => format!("RSS {:.1} GB (peak {:.1} GB)", now as f64 / 1e9, peak as f64 / 1e9),
        None => String::new(),
    }
}

/// Return freed heap memory to the operating system. The allocator keeps the pages of
/// small freed blocks for reuse; after a step that freed many of them (per-chunk lists),
/// this keeps the resident size equal to what is live.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: glibc's malloc_trim only releases free pages; it takes the heap locks.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Bytes free for an unprivileged writer on the file system holding `path`, where the
/// system can say (`statvfs` on Unix).
pub fn free_disk_bytes(path: &std::path::Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: `c` is a NUL-terminated path and `st` points to writable memory of the
        // structure's size; the structure is read only when the call succeeds.
        if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
            return None;
        }
        // SAFETY: statvfs returned 0, so it filled the structure.
        let st = unsafe { st.assume_init() };
        // The fields' types differ between platforms (u64 on 64-bit Linux).
        #[allow(clippy::unnecessary_cast)]
        Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Ask the CPU to fetch the cache line holding `p` into L1, ahead of a load or update
/// that would otherwise wait for memory (no effect on other architectures; never
/// faults, whatever the address).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never dereferences the pointer in a way that can
    // fault, whatever the address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Ask for transparent huge pages (2 MiB) behind a large array that is read and written
/// at random (the solver's state array): one TLB entry then covers 512 times as much
/// memory. Only a hint; where the kernel does not offer them nothing changes. Call it
/// before the memory is first touched.
pub fn advise_huge_pages<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        const MADV_HUGEPAGE: i32 = 14;
        unsafe extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        let start = v.as_ptr() as usize;
        let end = start + std::mem::size_of_val(v);
        let (lo, hi) = (start.next_multiple_of(PAGE), end / PAGE * PAGE);
        if hi > lo {
            // SAFETY: the range lies inside `v`'s allocation and is page-aligned; the advice
            // changes how pages are backed, never their contents.
            unsafe {
                madvise(lo as *mut std::ffi::c_void, hi - lo, MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = v;
}

/// Start writing `f`'s dirty pages to disk now, without waiting for them: a large file
/// written in parts and then synced (`sync_all`) has most of its bytes on disk by the
/// time the sync comes, so the sync waits for the last part only, not for all of it
/// (Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`; a hint elsewhere and on failure).
pub fn start_writeback(f: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        const SYNC_FILE_RANGE_WRITE: u32 = 2;
        unsafe extern "C" {
            fn sync_file_range(fd: i32, offset: i64, nbytes: i64, flags: u32) -> i32;
        }
        // SAFETY: the descriptor is open for as long as `f` is borrowed; offset 0 and
        // length 0 name the whole file; the call only schedules writes of its pages.
        unsafe {
            sync_file_range(f.as_raw_fd(), 0, 0, SYNC_FILE_RANGE_WRITE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = f;
}

#[cfg(test)]
mod tests {
    #[test]
    fn rss_is_read_and_peak_is_at_least_current() {
        let r = super::rss();
        if cfg!(target_os = "linux") {
            let (now, peak) = r.expect("/proc/self/status is readable on Linux");
            assert!(now > 0 && peak >= now, "{now} {peak}");
        }
        super::release_free_memory();
    }

    #[test]
    fn the_address_space_limit_is_what_proc_says() {
        // getrlimit and /proc/self/limits agree (both `None` without a limit).
        let limits = std::fs::read_to_string("/proc/self/limits").ok();
        if let Some(l) = limits.as_deref().and_then(|l| l.lines().find(|l| l.starts_with("Max address space"))) {
            let soft = l["Max address space".len()..].split_whitespace().next().unwrap();
            assert_eq!(super::address_space_limit(), soft.parse::<u64>().ok(), "{l}");
        }
    }

    #[test]
    fn free_disk_is_known_for_an_existing_directory_and_not_for_a_missing_one() {
        let here = std::env::temp_dir();
        assert!(super::free_disk_bytes(&here).is_some_and(|b| b > 0));
        assert_eq!(super::free_disk_bytes(&here.join("ostledb-no-such-dir/x")), None);
    }

    #[test]
    fn huge_page_advice_keeps_the_contents() {
        let mut v = vec![0u64; 1 << 20];
        super::advise_huge_pages(&v);
        for (i, x) in v.iter_mut().enumerate() {
            *x = i as u64;
        }
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        super::advise_huge_pages(&v[..0]);
    }
}
