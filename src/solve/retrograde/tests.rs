//! Tests of the solver: resumed and stopped solves, and record handling.
use super::*;
use std::sync::Mutex;

/// Counts the notes and steps a solve reports.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Reporter for Log {
    fn begin(&self, label: &str, _: u64) {
        self.0.lock().unwrap().push(format!("begin {label}"));
    }
    fn advance(&self, _: u64) {}
    fn end(&self) {}
    fn note(&self, m: &str) {
        self.0.lock().unwrap().push(format!("note {m}"));
    }
    fn warn(&self, m: &str) {
        self.0.lock().unwrap().push(format!("warn {m}"));
    }
}

#[test]
fn a_group_says_the_disk_it_needs_and_warns_when_less_is_free() {
    let dir = std::env::temp_dir();
    let free = crate::sys::free_disk_bytes(&dir).expect("free space of the temporary directory");
    let log = Log::default();
    check_free_disk(&dir, 1000, "(3,3)", &log);
    // Twice the positions the free space holds at 20 bytes each (other writers may free
    // some meanwhile, not that much).
    check_free_disk(&dir, 2 * (free / DISK_BYTES_PER_POSITION + 1), "(5,5)", &log);
    let lines = log.0.into_inner().unwrap();
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].starts_with("note (3,3): needs about 0.0 GB of disk"), "{lines:?}");
    assert!(lines[1].starts_with("note (5,5): needs about"), "{lines:?}");
    assert!(lines[2].starts_with("warn (5,5) will write about") && lines[2].contains("resumes"), "{lines:?}");
}

#[test]
fn a_resumed_solve_loads_finished_phases_and_ends_identical() {
    let g = Geometry::new(4, 3).unwrap();
    let dir = std::env::temp_dir().join(format!("ostledb-resume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let fresh = solve(&g, 6, &SolveOptions::default()).unwrap();
    let log = Arc::new(Log::default());
    let opts = SolveOptions { reporter: log.clone(), dir: Some(dir.clone()), ..SolveOptions::default() };
    let first = solve(&g, 6, &opts).unwrap();
    // A solve killed during the last group: its files are missing.
    std::fs::remove_file(phasefile::phase_file(&dir, Phase::new(3, 3))).unwrap();
    log.0.lock().unwrap().clear();
    let resumed = solve(&g, 6, &opts).unwrap();
    let steps = log.0.lock().unwrap().clone();
    assert!(steps.iter().any(|s| s.starts_with("note (2,2)")), "{steps:?}");
    assert!(steps.iter().any(|s| s.starts_with("note (3,2)+(2,3)")), "{steps:?}");
    assert!(steps.iter().any(|s| s == "begin (3,3) init"), "{steps:?}");
    assert!(!steps.iter().any(|s| s.starts_with("begin (2,2)")), "{steps:?}");
    for ((a, b), c) in fresh.phases().iter().zip(first.phases()).zip(resumed.phases()) {
        assert_eq!(a.raw(), b.raw());
        assert_eq!(a.raw(), c.raw());
    }
    let loaded = Solution::load(&dir, &g, 6).unwrap();
    assert_eq!(loaded.phases().len(), 4);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Asks a solve to stop after `levels` levels of the group whose label starts with
/// `group`, and logs the notes.
struct StopAfter {
    group: &'static str,
    levels: usize,
    seen: std::sync::atomic::AtomicUsize,
    active: std::sync::atomic::AtomicBool,
    /// A resumed group's bar is first advanced to where its checkpoint counted: not a level.
    resumed: std::sync::atomic::AtomicBool,
    /// The group's retrograde bar: its total and every advance.
    bar: Mutex<(u64, Vec<u64>)>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    log: Log,
}

impl StopAfter {
    fn new(group: &'static str, levels: usize) -> Arc<StopAfter> {
        Arc::new(StopAfter {
            group,
            levels,
            seen: Default::default(),
            active: Default::default(),
            resumed: Default::default(),
            bar: Default::default(),
            stop: Default::default(),
            log: Log::default(),
        })
    }
}

impl Reporter for StopAfter {
    fn begin(&self, label: &str, total: u64) {
        let active = label.starts_with(self.group) && label.ends_with("retrograde");
        self.active.store(active, Ordering::Relaxed);
        if active {
            self.bar.lock().unwrap().0 = total;
        }
        self.log.begin(label, total);
    }
    fn advance(&self, by: u64) {
        if self.active.load(Ordering::Relaxed) {
            self.bar.lock().unwrap().1.push(by);
        }
        // One call per level in the retrograde step, after the resumed count.
        if self.active.load(Ordering::Relaxed) && self.resumed.swap(false, Ordering::Relaxed) {
            return;
        }
        if self.active.load(Ordering::Relaxed) && self.seen.fetch_add(1, Ordering::Relaxed) + 1 == self.levels {
            self.stop.store(true, Ordering::Relaxed);
        }
    }
    fn end(&self) {}
    fn note(&self, m: &str) {
        if m.starts_with(self.group) && m.contains("resumed from its checkpoint") {
            self.resumed.store(true, Ordering::Relaxed);
        }
        self.log.note(m);
    }
}

#[test]
fn a_solve_stopped_inside_a_group_resumes_there_and_ends_identical() {
    let g = Geometry::new(4, 3).unwrap();
    let fresh = solve(&g, 6, &SolveOptions::default()).unwrap();
    let mut counted_any = false;
    for (group, first, second) in [("(3,2)+(2,3)", 1, 4), ("(3,3)", 3, 2), ("(2,2)", 2, 1)] {
        let dir = std::env::temp_dir().join(format!("ostledb-midgroup-{}-{first}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = |levels| {
            let rep = StopAfter::new(group, levels);
            let opts = SolveOptions {
                reporter: rep.clone(),
                dir: Some(dir.clone()),
                checkpoint_every: None,
                stop: Some(rep.stop.clone()),
            };
            let r = solve(&g, 6, &opts);
            (r, rep.log.0.lock().unwrap().clone(), rep.bar.lock().unwrap().clone())
        };
        // Stopped: an error naming the level; the checkpoint is on disk.
        let (r, _, (total, stopped)) = run(first);
        match r {
            Err(Error::Interrupted { group: gr, level, saved: true }) => {
                assert_eq!((gr.as_str(), level as usize), (group, first), "{group}");
            }
            other => panic!("{group}: expected an interrupted solve, got {other:?}"),
        }
        let phases: Vec<Phase> =
            fresh.phases().iter().map(|p| p.phase()).filter(|p| group.contains(&p.to_string())).collect();
        assert!(checkpoint::group_file(&dir, &phases).exists(), "{group}");
        assert!(log_file(&dir, &phases).exists(), "{group}");
        // Resumed, stopped again further on, resumed again to the end.
        // The bar goes on from where it stood when the group stopped, and ends full.
        let (r, notes, (_, again)) = run(second);
        assert!(matches!(r, Err(Error::Interrupted { .. })), "{group}: {r:?}");
        let counted: u64 = stopped.iter().sum();
        assert!(counted < total, "{group}: {stopped:?} of {total}");
        counted_any |= again.iter().sum::<u64>() > 0;
        assert_eq!(again.first(), Some(&counted), "{group}: {again:?}");
        assert!(
            notes.iter().any(|n| n.contains(&format!("resumed from its checkpoint at level {first}"))),
            "{notes:?}"
        );
        let (r, notes, (_, last)) = run(usize::MAX);
        let resumed = r.unwrap();
        assert_eq!(last.first(), Some(&again.iter().sum()), "{group}: {last:?}");
        assert_eq!(last.iter().sum::<u64>(), total, "{group}: {last:?}");
        let at = format!("resumed from its checkpoint at level {}", first + second);
        assert!(notes.iter().any(|n| n.contains(&at)), "{group}: {notes:?}");
        for (a, b) in fresh.phases().iter().zip(resumed.phases()) {
            assert_eq!(a.raw(), b.raw(), "{group} {}", a.phase());
        }
        assert!(!checkpoint::group_file(&dir, &phases).exists(), "{group}: checkpoint left behind");
        assert!(!log_file(&dir, &phases).exists(), "{group}: event log left behind");
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(counted_any, "no group had counted any progress when it stopped the second time");
}

#[test]
fn a_stop_without_a_directory_saves_nothing_and_says_so() {
    let g = Geometry::new(3, 3).unwrap();
    let rep = StopAfter::new("(2,2)", 1);
    let opts = SolveOptions { reporter: rep.clone(), stop: Some(rep.stop.clone()), ..SolveOptions::default() };
    let e = solve(&g, 4, &opts).unwrap_err();
    assert!(matches!(e, Error::Interrupted { saved: false, .. }), "{e:?}");
    assert!(e.to_string().contains("nothing saved"), "{e}");
}

#[test]
fn finished_states_make_the_records_and_a_damaged_log_is_refused() {
    // A position won (generic) whose special move 6 is lost, and some predecessor forbids 6.
    let st = initial(3, 5, true, 4).with_s(6).decide(GEN, true).decide(SPC, false);
    let reached = |s: State| State(s.0 | SPECIAL_REACHED);
    let fin = finished(reached(st).0);
    assert_eq!(record(fin | logged(GEN, 9) | logged(SPC, 7)), Some(Packed::new(win(9), 6, loss(7)).0));
    // No predecessor forbids it: the node does not exist and its value is dropped.
    assert_eq!(record(finished(st.0) | logged(GEN, 9) | logged(SPC, 7)), Some(win(9) as u64));
    // The same value twice is no exception; a won special with no decided generic cannot be.
    let both = reached(initial(2, 1, false, 0).with_s(3).decide(GEN, true).decide(SPC, true));
    assert_eq!(record(finished(both.0) | logged(GEN, 5) | logged(SPC, 5)), Some(win(5) as u64));
    // A special move whose node stayed undecided is a drawn special.
    let open = reached(initial(2, 1, false, 0).with_s(3).decide(GEN, true));
    assert_eq!(record(finished(open.0) | logged(GEN, 5)), Some(Packed::new(win(5), 3, 0).0));
    // Undecided: a draw; an immediate win: Win(1) without any log entry.
    assert_eq!(record(finished(initial(2, 3, false, 0).0)), Some(0));
    assert_eq!(record(finished(immediate_win().0)), Some(win(1) as u64));
    // The largest distance and a loss at distance 0 both survive.
    let lost = initial(0, 0, true, 0).decide(GEN, false);
    assert_eq!(record(finished(lost.0) | logged(GEN, MAX_DIST)), Some(loss(MAX_DIST) as u64));
    assert_eq!(record(finished(lost.0) | logged(GEN, 0)), Some(loss(0) as u64));
    // A decided node the log missed, or a logged node never decided: damage.
    assert_eq!(record(fin | logged(GEN, 9)), None);
    assert_eq!(record(finished(initial(2, 3, false, 0).0) | logged(SPC, 4)), None);
    assert!(was_logged(finished(immediate_win().0), GEN));
}

#[test]
fn a_resumed_group_refuses_a_short_event_log_and_cuts_back_a_long_one() {
    let g = Geometry::new(4, 3).unwrap();
    let fresh = solve(&g, 6, &SolveOptions::default()).unwrap();
    let dir = std::env::temp_dir().join(format!("ostledb-eventlog-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = |levels| {
        let rep = StopAfter::new("(3,3)", levels);
        let opts = SolveOptions {
            reporter: rep.clone(),
            dir: Some(dir.clone()),
            checkpoint_every: None,
            stop: Some(rep.stop.clone()),
        };
        solve(&g, 6, &opts)
    };
    assert!(matches!(run(6), Err(Error::Interrupted { .. })));
    let path = log_file(&dir, &[Phase::new(3, 3)]);
    let good = std::fs::read(&path).unwrap();
    assert!(!good.is_empty() && good.len().is_multiple_of(4));
    // Cut short (a lost write): refused, with what to do.
    std::fs::write(&path, &good[..good.len() - 4]).unwrap();
    let e = run(usize::MAX).unwrap_err();
    assert!(matches!(&e, Error::Corrupt { path: p, .. } if *p == path), "{e:?}");
    assert!(e.to_string().contains("delete the checkpoint"), "{e}");
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(run(usize::MAX), Err(Error::Corrupt { .. })));
    // Longer than the checkpoint counts (levels logged after it, then a kill): cut back.
    let mut longer = good.clone();
    longer.extend_from_slice(&[0xff; 12]);
    std::fs::write(&path, &longer).unwrap();
    let resumed = run(usize::MAX).unwrap();
    for (a, b) in fresh.phases().iter().zip(resumed.phases()) {
        assert_eq!(a.raw(), b.raw(), "{}", a.phase());
    }
    assert!(!path.exists(), "the log is removed with the checkpoint");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn node_values_follow_the_special_move() {
    let v = PhaseValues::from_raw(Phase::new(4, 4), vec![win(3) as u64 | (loss(8) as u64) << 16 | 5 << 32, 0]);
    assert_eq!(v.node(0, 0), Outcome::Win(3));
    assert_eq!(v.node(0, 5), Outcome::Loss(8));
    assert_eq!(v.node(0, 4), Outcome::Win(3));
    assert_eq!(v.node(1, 3), Outcome::Draw);
    assert_eq!(v.record(0).special, Some((5, Outcome::Loss(8))));
}

/// The next group solved on top of a packed database (its values eliding loss
/// distances, the solver's phase files gone) reads the exact base values of the group
/// below and ends identical to a solve from nothing.
#[test]
fn a_group_solved_on_top_of_a_packed_database_ends_identical() {
    let g = Geometry::new(4, 3).unwrap();
    let fresh = solve(&g, 6, &SolveOptions::default()).unwrap();
    let dir = std::env::temp_dir().join(format!("ostledb-ontop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let opts = SolveOptions { dir: Some(dir.clone()), ..SolveOptions::default() };
    let mut counts = Vec::new();
    solve_into(&g, 5, &opts, |c| {
        counts.push(c);
        Ok(())
    })
    .unwrap();
    let packed = crate::working::pack::pack(&dir, &g, 5, &Default::default(), |_| {}).unwrap();
    assert!(!phasefile::phase_file(&dir, Phase::new(3, 2)).exists());
    assert!(packed.phases.iter().all(|p| p.win + p.loss + p.draw == p.positions));
    counts.clear();
    solve_into(&g, 6, &opts, |c| {
        counts.push(c);
        Ok(())
    })
    .unwrap();
    for c in &counts {
        let want = fresh.phase(c.phase).unwrap();
        let base: Vec<Val> = want.raw().iter().map(|&r| Packed(r).base()).collect();
        let mut expect = PhaseCounts::new(c.phase);
        expect.add(&base);
        assert_eq!(*c, expect, "{}", c.phase);
    }
    let solved =
        phasefile::load(&dir, &g, Phase::new(3, 3), fresh.phase(Phase::new(3, 3)).unwrap().len()).unwrap().unwrap();
    assert_eq!(solved.raw(), fresh.phase(Phase::new(3, 3)).unwrap().raw());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sums what each step's bar is advanced by, against the total it began with.
#[derive(Default)]
struct Bars(Mutex<Vec<(String, u64, u64)>>);

impl Reporter for Bars {
    fn begin(&self, label: &str, total: u64) {
        self.0.lock().unwrap().push((label.to_string(), total, 0));
    }
    fn advance(&self, by: u64) {
        if let Some(bar) = self.0.lock().unwrap().last_mut() {
            bar.2 += by;
        }
    }
    fn end(&self) {}
    fn note(&self, _: &str) {}
}

#[test]
fn a_finished_retrograde_step_ends_with_its_bar_full() {
    // Draws and the wins decided at init are never propagated, yet a group that ends
    // must not read as stopped short ("X of Y done"): the last level settles them.
    let g = Geometry::new(4, 3).unwrap();
    let bars = Arc::new(Bars::default());
    let opts = SolveOptions { reporter: bars.clone(), ..SolveOptions::default() };
    solve(&g, 6, &opts).unwrap();
    let bars = bars.0.lock().unwrap();
    let steps: Vec<_> = bars.iter().filter(|(label, _, _)| label.ends_with("retrograde")).collect();
    assert!(steps.len() >= 3, "{bars:?}");
    for (label, total, advanced) in steps {
        assert_eq!(advanced, total, "{label}");
    }
}
