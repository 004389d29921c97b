//! The examples' random numbers: xorshift64*, enough for wandering.

use bevy_ecs::resource::Resource;

/// xorshift64*, enough for wandering.
#[derive(Resource)]
pub struct Rng(pub u64);

impl Rng {
    /// A number in `[0, 1)`.
    pub fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    }
}
