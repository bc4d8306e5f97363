"""Writes a sigrok session file (.sr, format version 2) of one-byte logic samples, as
sigrok-cli and PulseView write them: a zip of `version`, `metadata` and 4 MiB chunks named
`logic-1-N`. Shared by the bench/make_*_sr.py generators."""
import zipfile


def write_sr(out, probes, samples, samplerate="10 MHz"):
    """`probes`: channel names, bit 0 first; `samples`: bytes, one per sample."""
    lines = ["[global]", "sigrok version=0.5.2", "", "[device 1]", "capturefile=logic-1",
             f"total probes={len(probes)}", f"samplerate={samplerate}", "total analog=0"]
    lines += [f"probe{i + 1}={name}" for i, name in enumerate(probes)]
    lines += ["unitsize=1", ""]
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("version", "2")
        z.writestr("metadata", "\n".join(lines))
        chunk = 4 << 20
        for i in range(0, len(samples), chunk):
            z.writestr(f"logic-1-{i // chunk + 1}", bytes(samples[i:i + chunk]))
