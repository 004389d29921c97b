//! The step limit: how far an entity may move in one update and still only *step* (its pairs
//! decided by flip scans rather than a recompute and a target scan). It follows the movers: an
//! eighth of the cell side while most of them move less, a quarter or half of it while most
//! move farther.

/// The step limits to choose from, as fractions of the cell side, smallest first.
///
/// An eighth keeps a stepping observer's flip scan (its radius plus its own step and the
/// largest step) within the cells around its own under the automatic side; a larger limit makes
/// every flip scan's window larger, which pays only when most movers would otherwise jump.
/// Measured (`PERFORMANCE.md`, stop 33: `scenario`, one thread, walkers of radius 100, three
/// alternating rounds): against a limit of always an eighth, uniform 10k stepping 15 a tick
/// 18.9–19.1 → 15.1–16.4 ms an update, 20 a tick 20.7–22.8 → 17.7–18.9 ms, 5 a tick level
/// (8.8–9.1 → 8.6–8.8 ms; callgrind 0.2% more instructions, the counting); uniform 50k stepping
/// 15 a tick 95.4–97.9 → 78.6–79.9 ms (two rounds).
const LIMITS_OVER_SIDE: [f32; 3] = [0.125, 0.25, 0.5];

/// The step limit in force, and this update's moves counted against each limit to choose the
/// next one.
#[derive(Debug, Default)]
pub(crate) struct StepLimit {
    /// Which of [`LIMITS_OVER_SIDE`] is in force.
    chosen: usize,
    /// This update's moves: changes indexed before and after with the same rules.
    moves: u32,
    /// Of those, how many moved at most each limit.
    within: [u32; LIMITS_OVER_SIDE.len()],
}

impl StepLimit {
    /// The limit in force for a cell side of `side`, and the others to count moves against.
    pub fn limits(&self, side: f32) -> StepLimits {
        StepLimits {
            all: LIMITS_OVER_SIDE.map(|f| f * side),
            chosen: self.chosen,
        }
    }

    /// Counts one move of length `step` against `limits`.
    #[inline]
    pub fn count(&mut self, step: f32, limits: &StepLimits) {
        self.moves += 1;
        for (within, &limit) in self.within.iter_mut().zip(&limits.all) {
            *within += u32::from(step <= limit);
        }
    }

    /// Ends the update's count: the next update's limit is the smallest that at least half of
    /// this update's moves stayed within (the largest if none did; unchanged without moves).
    pub fn choose_next(&mut self) {
        if self.moves > 0 {
            let half = self.moves.div_ceil(2);
            self.chosen = (self.within.iter())
                .position(|&w| w >= half)
                .unwrap_or(LIMITS_OVER_SIDE.len() - 1);
        }
        self.moves = 0;
        self.within = [0; LIMITS_OVER_SIDE.len()];
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
    fn the_limit_is_the_smallest_that_half_the_moves_stayed_within() {
        let mut limit = StepLimit::default();
        assert_eq!(
            limit.over_side(),
            0.125,
            "the limit should start at an eighth of the side"
        );
        assert_eq!(after(&mut limit, &[0.1, 0.1, 0.2, 0.4]), 0.125, "half within an eighth");
        assert_eq!(
            after(&mut limit, &[0.1, 0.2, 0.2, 0.4]),
            0.25,
            "a quarter of moves within an eighth"
        );
        assert_eq!(
            after(&mut limit, &[0.3, 0.3, 0.5, 0.1]),
            0.5,
            "half within half the side"
        );
        assert_eq!(after(&mut limit, &[0.9, 0.9, 0.9]), 0.5, "none within any: the largest");
        assert_eq!(after(&mut limit, &[]), 0.5, "no moves: the limit should stay");
        assert_eq!(after(&mut limit, &[0.0; 3]), 0.125, "standing still: back to an eighth");
        assert_eq!(
            after(&mut limit, &[0.125, 1.0]),
            0.125,
            "a move of exactly the limit is within it"
        );
    }
}
