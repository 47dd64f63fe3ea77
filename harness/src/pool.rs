//! The one worker pool for the harness's parallel work (building a family's cases, running
//! them): `workers` threads take items from a queue in the order given, each with its own
//! state (a replay service, say), and stop taking new ones once the run is interrupted.
//! What happens comes back on the calling thread, in the order it happened: an item
//! started, an item finished with its result, and a tick each second while nothing did
//! (for heartbeats), so callers keep their bookkeeping single-threaded.

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

/// What the pool reports to the calling thread.
pub enum Event<R> {
    /// Item `index` (its place in the slice given) was taken by a worker.
    Started(usize),
    /// Item `index` finished with this result.
    Finished(usize, R),
    /// A second passed with no other event.
    Tick,
}

/// Runs `work` over `items` on `workers` threads (at least one), taking them in the order
/// of `order` (indices into `items`; `None`: as given). Worker `w` builds its state with
/// `init(w)` before taking its first item. `on_event` runs on this thread. Once
/// `interrupted()` is true no item is started; the ones running finish. Returns when every
/// worker has stopped.
pub fn run<'a, T, R, S>(
    items: &'a [T],
    order: Option<Vec<usize>>,
    workers: usize,
    interrupted: impl Fn() -> bool + Sync,
    init: impl Fn(usize) -> S + Sync,
    work: impl Fn(&mut S, usize, &'a T) -> R + Sync,
    mut on_event: impl FnMut(Event<R>),
) where
    T: Sync,
    R: Send,
{
    let order = order.unwrap_or_else(|| (0..items.len()).collect());
    let queue = Mutex::new(order.into_iter());
    let (tx, rx) = mpsc::channel::<(usize, Option<R>)>();
    std::thread::scope(|s| {
        for w in 0..workers.max(1) {
            let tx = tx.clone();
            let (queue, interrupted, init, work) = (&queue, &interrupted, &init, &work);
            s.spawn(move || {
                let mut state = init(w);
                loop {
                    if interrupted() {
                        return;
                    }
                    let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
                    let Some(i) = next.filter(|&i| i < items.len()) else {
                        return;
                    };
                    let _ = tx.send((i, None));
                    let r = work(&mut state, i, &items[i]);
                    let _ = tx.send((i, Some(r)));
                }
            });
        }
        drop(tx);
        loop {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok((i, None)) => on_event(Event::Started(i)),
                Ok((i, Some(r))) => on_event(Event::Finished(i, r)),
                Err(mpsc::RecvTimeoutError::Timeout) => on_event(Event::Tick),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    });
}

/// The workers for CPU-bound work on this machine: its parallelism, at most `cap`.
pub fn cpu_workers(cap: usize) -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, cap.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_item_runs_once_in_the_given_order_with_its_workers_state() {
        let items: Vec<u32> = (0..50).collect();
        let mut started = Vec::new();
        let mut finished = vec![None; items.len()];
        run(
            &items,
            Some((0..50).rev().collect()),
            1,
            || false,
            |w| (w, 0usize),
            |state, i, x| {
                state.1 += 1;
                (i, *x * 2, state.1)
            },
            |e| match e {
                Event::Started(i) => started.push(i),
                Event::Finished(i, r) => finished[i] = Some(r),
                Event::Tick => {}
            },
        );
        assert_eq!(
            started,
            (0..50).rev().collect::<Vec<_>>(),
            "one worker keeps the order"
        );
        for (i, r) in finished.iter().enumerate() {
            let (j, doubled, _) = r.unwrap();
            assert_eq!((j, doubled), (i, i as u32 * 2));
        }
        // The single worker's state counted every item it took.
        assert_eq!(finished[0].unwrap().2, 50);
    }

    #[test]
    fn several_workers_share_the_queue_and_an_interrupt_stops_new_items() {
        let items: Vec<u32> = (0..200).collect();
        let done = AtomicUsize::new(0);
        let mut results = 0;
        run(
            &items,
            None,
            4,
            || false,
            |_| (),
            |_, _, _| done.fetch_add(1, Ordering::SeqCst),
            |e| {
                if let Event::Finished(..) = e {
                    results += 1
                }
            },
        );
        assert_eq!((done.load(Ordering::SeqCst), results), (200, 200));

        let taken = AtomicUsize::new(0);
        run(
            &items,
            None,
            3,
            || taken.load(Ordering::SeqCst) >= 5,
            |_| (),
            |_, _, _| {
                taken.fetch_add(1, Ordering::SeqCst);
            },
            |_| {},
        );
        let n = taken.load(Ordering::SeqCst);
        assert!(
            (5..=7).contains(&n),
            "interrupted after 5, at most one more per worker: {n}"
        );
    }

    #[test]
    fn an_idle_second_is_a_tick() {
        let items = [()];
        let mut ticks = 0;
        run(
            &items,
            None,
            1,
            || false,
            |_| (),
            |_, _, _| std::thread::sleep(Duration::from_millis(1300)),
            |e| {
                if let Event::Tick = e {
                    ticks += 1
                }
            },
        );
        assert!(ticks >= 1);
    }
}
