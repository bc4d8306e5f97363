//! Captures recorded at test time with sigrok-cli's demo device (random logic levels on
//! eight channels, a hostile input for every decoder): our UART, SPI and I2C annotations
//! must equal sigrok-cli's on them, frame errors and all.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use std::process::Command;

fn record(name: &str, pattern: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("latscope-decoders-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("demo.sr");
    let out = latscope_testkit::Need::SigrokCli.output(
        Command::new("sigrok-cli")
            .args(["-d", "demo:logic_channels=8:analog_channels=0", "--samples", "200000", "-g", "Logic"])
            .args(["--config", &format!("pattern={pattern}"), "-o"])
            .arg(&path),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

fn cleanup(path: &std::path::Path) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
#[cfg_attr(not(have_sigrok_cli), ignore = "needs sigrok-cli: apt-get install sigrok-cli")]
fn uart_spi_i2c_on_random_levels_equal_sigrok() {
    let path = record("random", "random");
    let (src, rate) = open(&path);
    let sig = |pd: &str, ann: &str| -> Vec<(i64, i64, String)> {
        sigrok(&path, pd, ann).into_iter().map(|s| (s.ss, s.es, s.text)).collect()
    };

    let ours = decode(&src, rate, "uart:rx=D3,baud=9600");
    let want = sig("uart:rx=D3:baudrate=9600", "uart=rx-data");
    assert!(want.len() > 100, "{}", want.len());
    assert_same(&rows(&ours, "uart", "data"), &want, "uart");

    let ours = decode(&src, rate, "uart:rx=D5,baud=19200,parity=even,bits=7");
    let want = sig("uart:rx=D5:baudrate=19200:parity=even:data_bits=7", "uart=rx-data");
    assert_same(&rows(&ours, "uart", "data"), &want, "uart 7E1");

    let ours = decode(&src, rate, "spi:clk=D0,mosi=D1,miso=D2,cpha=1");
    for row in ["mosi", "miso"] {
        let want = sig("spi:clk=D0:mosi=D1:miso=D2:cpha=1", &format!("spi={row}-data"));
        assert!(want.len() > 1000, "{}", want.len());
        assert_same(&rows(&ours, "spi", row), &want, &format!("spi {row}"));
    }

    let ours = decode(&src, rate, "i2c:scl=D6,sda=D7");
    let mut mine = Vec::new();
    for row in ["start", "stop", "rw", "address", "ack", "data"] {
        mine.extend(rows(&ours, "i2c", row));
    }
    mine.sort();
    let mut want = sig("i2c:scl=D6:sda=D7", "i2c=addr-data");
    want.sort();
    assert!(want.len() > 1000, "{}", want.len());
    assert_same(&mine, &want, "i2c");
    cleanup(&path);
}
