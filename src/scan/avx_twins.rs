//! [`avx_twins`]: a scan's inner work written once and compiled twice, for AVX and for the
//! `x86_64` baseline, and called in the form this CPU runs.

/// Defines `$name`, which runs `$body` compiled for AVX (as `$avx`) where the CPU has it and
/// for the `x86_64` baseline (as `$portable`, out of line) elsewhere; in `$body` the constant
/// `AVX` says which compilation it is, for the AVX mask tests of
/// [`Positions`](crate::grid::Positions) to be asked for only in the first.
///
/// Written once in the macro, not in one `#[inline(always)]` function called from both: a
/// closure inherits the target features of the function it is written in, not of one it is
/// inlined into, so that AVX copy's closures stayed out of line and uncompiled for AVX
/// (callgrind, 5% moving 50k, the both-ways flip scan: 31.36 → 32.60 M instructions an update;
/// written in a macro, 31.50 M). With `AVX` a constant, the AVX compilation is the only caller of
/// the AVX mask tests, so those are inlined into its loops too (30.68 M).
macro_rules! avx_twins {
    (
        $(#[$doc:meta])*
        fn $name:ident / $avx:ident / $portable:ident ($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        $(#[$doc])*
        #[inline(always)]
        fn $name($($arg: $ty),*) {
            #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
            if crate::grid::avx_available() {
                #[expect(
                    unsafe_code,
                    reason = "a scan compiled for AVX, called after the CPU was checked for it: \
                              see `avx_twins`"
                )]
                // SAFETY: `avx_available()` said this CPU has the AVX instructions `$avx` is
                // compiled with.
                unsafe {
                    $avx($($arg),*);
                }
                return;
            }
            $portable($($arg),*);
        }

        #[doc = concat!("[`", stringify!($name), "`] compiled for AVX (the CPU checked there).")]
        #[cfg(all(target_arch = "x86_64", not(bevy_aoi_portable)))]
        #[target_feature(enable = "avx")]
        fn $avx($($arg: $ty),*) {
            const AVX: bool = true;
            $body
        }

        #[doc = concat!(
            "[`", stringify!($name), "`] for the `x86_64` baseline (and other architectures)."
        )]
        #[inline(never)]
        fn $portable($($arg: $ty),*) {
            const AVX: bool = false;
            $body
        }
    };
}

pub(super) use avx_twins;
