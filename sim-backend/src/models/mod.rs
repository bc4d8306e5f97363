//! Reusable hardware and kernel models. Each owns one mechanism; the scenarios wire them
//! together with a driver strategy and decide what to emit.

pub mod cpu;
pub mod irq;
pub mod nic;
pub mod pcie;
pub mod sdbus;
pub mod sdhost;
