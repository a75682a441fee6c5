//! What the process asks of the operating system about its own memory: the resident set
//! size now and at its peak (read from `/proc/self/status`), and handing freed heap pages
//! back. Long solves report both at every large step, so a memory budget is checked while
//! it runs rather than after it fails.

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
}
