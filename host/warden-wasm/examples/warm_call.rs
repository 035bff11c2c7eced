//! The Rust library's warm call, the baseline of the Python package's
//! `call_tool` benchmark (host/warden-py/bench): loads a component once, then
//! times CALLS calls of TOOL with INPUT under POLICY's mounts and limits, and
//! prints the nanoseconds per call.
//!
//!   cargo run --release --example warm_call -- POLICY COMPONENT TOOL INPUT CALLS

use std::path::Path;
use std::time::Instant;

use warden_wasm::{preopens_for, RunConfig, RunLimits, Runtime, RuntimeOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [policy, component, tool, input, calls] = args.as_slice() else {
        eprintln!("usage: warm_call POLICY COMPONENT TOOL INPUT CALLS");
        std::process::exit(2);
    };
    let calls: u32 = calls.parse().expect("CALLS is a number");
    let policy = warden_policy::load(Path::new(policy)).expect("the policy loads");
    let sandbox = warden_fs::Sandbox::open(&policy).expect("the sandbox opens");
    let (preopens, lists) = preopens_for(&sandbox).expect("the mounts become preopens");
    let config = RunConfig {
        preopens,
        lists,
        network: policy.network.clone(),
        env: policy.env.clone(),
        limits: RunLimits::resolve(policy.limits, false),
        ..Default::default()
    };
    // As the Python package makes its runtime.
    let runtime = Runtime::new(RuntimeOptions { cache_dir: warden_wasm::default_cache_dir(), max_concurrent: 64, pooled: true }).expect("a runtime");
    let loaded = runtime.load_file(Path::new(component)).expect("the component loads");
    let call = || runtime.call(&loaded, &config, tool, input).expect("the call runs").result.expect("the tool answers");
    for _ in 0..calls.min(200) {
        call();
    }
    let started = Instant::now();
    for _ in 0..calls {
        call();
    }
    println!("{}", started.elapsed().as_nanos() / u128::from(calls));
}
