//! The step limit: how far an entity may move in one update and still only *step* (its pairs
//! decided by flip scans rather than a recompute and a target scan). It follows the movers: an
//! eighth of the cell side while nearly all of them move less, a quarter or half of it while
//! more than a few move farther.

/// The step limits to choose from, as fractions of the cell side, smallest first.
///
/// An eighth keeps a stepping observer's flip scan (its radius plus its own step and the
/// largest step) within the cells around its own under the automatic side. A larger limit lets
/// longer steps widen every flip scan's window (the windows follow the longest step taken, not
/// the limit), which pays as soon as more than a few movers would otherwise jump: a jump costs
/// several times a step (a recompute, and a target scan that judges the observers around both
/// of its points), so the limit rises when more than one move in [`JUMPS_PER_MOVE`] would jump.
/// Measured (`PERFORMANCE.md`, stop 33: `scenario`, one thread, walkers of radius 100, three
/// alternating rounds): against a limit of always an eighth, uniform 10k stepping 15 a tick
/// 18.9–19.1 → 15.1–16.4 ms an update, 20 a tick 20.7–22.8 → 17.7–18.9 ms, 5 a tick level
/// (8.8–9.1 → 8.6–8.8 ms; callgrind 0.2% more instructions, the counting); uniform 50k stepping
/// 15 a tick 95.4–97.9 → 78.6–79.9 ms (two rounds).
const LIMITS_OVER_SIDE: [f32; 3] = [0.125, 0.25, 0.5];

/// The share of an update's moves allowed beyond the limit before the next update takes a
/// larger one: one in 256. Measured (`PERFORMANCE.md`, stop 33: walkers of radius 100 stepping
/// 5 a tick but for one in `n` stepping 20, one thread, three rounds): uniform 10k, an eighth
/// against a quarter, one in 1,000 8.5–8.6 against 9.2–9.5 ms an update, one in 200 9.2–9.5
/// against 9.1–9.6, one in 50 10.6–11.5 against 9.4–9.7, one in 20 13.4–14.0 against 9.9–10.6;
/// this rule against a fixed eighth, one in 10 16.7–19.4 → 10.7–11.4 ms, uniform 50k one in 50
/// 65.1–66.6 → 52.9 ms and one in 10 95.5–96.8 → 57.6–59.1 ms.
const JUMPS_PER_MOVE: u32 = 256;

/// The step limit in force, and this update's moves counted against each limit to choose the
/// next one.
#[derive(Debug, Default)]
pub(crate) struct StepLimit {
    /// Which of [`LIMITS_OVER_SIDE`] is in force.
    chosen: usize,
    /// This update's moves: changes indexed before and after with the same rules.
    moves: u32,
    /// Of those, how many moved farther than each limit.
    beyond: [u32; LIMITS_OVER_SIDE.len()],
}

impl StepLimit {
    /// The limit in force for a cell side of `side`, and the others to count moves against.
    pub fn limits(&self, side: f32) -> StepLimits {
        StepLimits {
            all: LIMITS_OVER_SIDE.map(|f| f * side),
            chosen: self.chosen,
        }
    }

    /// Counts one move of length `step` against `limits`. Most moves are within the smallest
    /// limit: one comparison for them (callgrind, `sparse_huge` 50k: counting every move against
    /// all three limits took 0.85 M instructions an update, 17 a change; this 0.25 M).
    #[inline]
    pub fn count(&mut self, step: f32, limits: &StepLimits) {
        self.moves += 1;
        if step > limits.all[0] {
            for (beyond, &limit) in self.beyond.iter_mut().zip(&limits.all) {
                *beyond += u32::from(step > limit);
            }
        }
    }

    /// Adds the moves `run` counted (a run of the shortlist counted apart) to this count, and
    /// empties `run`'s.
    pub fn absorb(&mut self, run: &mut StepLimit) {
        self.moves += core::mem::take(&mut run.moves);
        for (beyond, run) in self.beyond.iter_mut().zip(&mut run.beyond) {
            *beyond += core::mem::take(run);
        }
    }

    /// Ends the update's count: the next update's limit is the smallest that all but one in
    /// [`JUMPS_PER_MOVE`] of this update's moves stayed within (the largest if none is; unchanged
    /// without moves).
    pub fn choose_next(&mut self) {
        if self.moves > 0 {
            let may_jump = self.moves / JUMPS_PER_MOVE;
            self.chosen = (self.beyond.iter())
                .position(|&b| b <= may_jump)
                .unwrap_or(LIMITS_OVER_SIDE.len() - 1);
        }
        self.moves = 0;
        self.beyond = [0; LIMITS_OVER_SIDE.len()];
    }

    /// The limit in force as a fraction of the cell side.
    pub fn over_side(&self) -> f32 {
        LIMITS_OVER_SIDE[self.chosen]
    }
}

/// The step limits for one cell side ([`StepLimit::limits`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct StepLimits {
    all: [f32; LIMITS_OVER_SIDE.len()],
    chosen: usize,
}

impl StepLimits {
    /// The limit in force: a longer move is a jump.
    #[inline]
    pub fn in_force(&self) -> f32 {
        self.all[self.chosen]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The limit (as a fraction of a side of 1) chosen after one update of `steps`.
    fn after(start: &mut StepLimit, steps: &[f32]) -> f32 {
        let limits = start.limits(1.0);
        steps.iter().for_each(|&s| start.count(s, &limits));
        start.choose_next();
        start.over_side()
    }

    #[test]
    fn the_limit_is_the_smallest_all_but_one_move_in_256_stayed_within() {
        let mut limit = StepLimit::default();
        assert_eq!(
            limit.over_side(),
            0.125,
            "the limit should start at an eighth of the side"
        );
        let moves = |n: usize, step: f32| core::iter::repeat_n(step, n);
        let one_in_256: Vec<f32> = moves(255, 0.1).chain(moves(1, 0.4)).collect();
        assert_eq!(
            after(&mut limit, &one_in_256),
            0.125,
            "one move in 256 beyond an eighth may jump"
        );
        let one_in_255: Vec<f32> = moves(254, 0.1).chain(moves(1, 0.4)).collect();
        assert_eq!(
            after(&mut limit, &one_in_255),
            0.5,
            "one move in 255 beyond a quarter may not jump: half the side"
        );
        let three_in_515: Vec<f32> = moves(512, 0.1).chain(moves(2, 0.2)).chain(moves(1, 0.4)).collect();
        assert_eq!(
            after(&mut limit, &three_in_515),
            0.25,
            "three moves in 515 beyond an eighth, one beyond a quarter: a quarter"
        );
        assert_eq!(after(&mut limit, &[0.9, 0.9, 0.9]), 0.5, "none within any: the largest");
        assert_eq!(after(&mut limit, &[]), 0.5, "no moves: the limit should stay");
        assert_eq!(after(&mut limit, &[0.0; 3]), 0.125, "standing still: back to an eighth");
        assert_eq!(
            after(&mut limit, &[0.125]),
            0.125,
            "a move of exactly the limit is within it"
        );
    }

    #[test]
    fn moves_counted_in_runs_and_absorbed_choose_the_limit_counted_at_once() {
        // 600 moves, 3 beyond a quarter: within one in 256 only when all are counted together.
        let steps: Vec<f32> = (0..600).map(|i| if i % 200 == 7 { 0.4 } else { 0.05 }).collect();
        let mut at_once = StepLimit::default();
        let at_once = after(&mut at_once, &steps);
        let (mut split, limits) = (StepLimit::default(), StepLimit::default().limits(1.0));
        for run in steps.chunks(150) {
            let mut counted = StepLimit::default();
            run.iter().for_each(|&s| counted.count(s, &limits));
            split.absorb(&mut counted);
            assert_eq!(counted.moves, 0, "absorbing a run should empty its count");
        }
        split.choose_next();
        assert_eq!(
            split.over_side(),
            at_once,
            "runs counted apart and absorbed should choose the limit one count does"
        );
        assert_eq!(at_once, 0.5, "three moves in 600 beyond a quarter: half the side");
    }
}
