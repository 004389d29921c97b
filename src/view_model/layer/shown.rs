//! Keeping an owned observer's shown targets sorted by target as targets enter
//! ([`merge_by_target`]).

use super::{NO_SLOT, Shown};

/// Merges `entering` (shown targets and their slots, any order, none shown yet; emptied) into
/// `shown` and its `slots`, keeping `shown` sorted by target: up to [`INSERT_UP_TO`] one by one
/// (a binary search and a shift each), more in one pass from the back, `O(shown + k log k)` for
/// `k` entering. Out of line: once the pass moved to `look.rs` the compiler inlined it there, and
/// the update ran 1.8% more instructions where everyone moves (`scenario` uniform 10k with
/// `--hysteresis 10`, callgrind: 229.1 M an update before the move, 233.4 M inlined, 230.2 M out
/// of line).
#[inline(never)]
pub(super) fn merge_by_target(shown: &mut Vec<Shown>, slots: &mut Vec<u32>, entering: &mut Vec<(Shown, u32)>) {
    if entering.is_empty() {
        return;
    }
    if entering.len() <= INSERT_UP_TO && shown.len() <= INSERT_INTO_UP_TO {
        for &(sn, t) in entering.iter() {
            let at = shown.partition_point(|shown| shown.target < sn.target);
            shown.insert(at, sn);
            slots.insert(at, t);
        }
        entering.clear();
        return;
    }
    entering.sort_unstable_by_key(|(sn, _)| sn.target);
    let (mut i, mut j) = (shown.len(), entering.len());
    shown.resize(i + j, entering[0].0);
    slots.resize(i + j, NO_SLOT);
    for k in (0..shown.len()).rev() {
        if j == 0 {
            break;
        }
        if i > 0 && shown[i - 1].target > entering[j - 1].0.target {
            shown[k] = shown[i - 1];
            slots[k] = slots[i - 1];
            i -= 1;
        } else {
            (shown[k], slots[k]) = entering[j - 1];
            j -= 1;
        }
    }
    entering.clear();
}

/// Up to this many entering targets are put into an observer's shown targets one by one
/// ([`merge_by_target`]), when it shows at most [`INSERT_INTO_UP_TO`]: where few move, most
/// observers take one or two an update, and the pass from the back moved every entry after the
/// first place one at a time, in both arrays. Callgrind (`scenario --entities 10000
/// --hysteresis 10`, one thread), instructions an update, the pass always / up to 2 / 4 / 8 one
/// by one: 5% moving 44.69 / 43.20 / 42.93 / 42.84 M, uniform 218.9 / 213.3 / 206.8 / 204.1 M.
const INSERT_UP_TO: usize = 8;

/// See [`INSERT_UP_TO`]: in longer arrays each shift moves more than the pass saves (crowded 2k
/// with hysteresis, about 2,000 shown targets each, four alternating runs: 24.2-24.3 ms an
/// update with the pass, 25.8-26.3 one by one).
const INSERT_INTO_UP_TO: usize = 256;
