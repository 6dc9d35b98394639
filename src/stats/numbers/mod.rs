pub mod ci;
pub(super) mod delta;
pub mod descriptive;
pub(super) mod running;
