# docs/guide/python.md — the i.MX8MQ question in Python: cells (`# %%`) as a notebook runs them.

# %%
import latscope
import polars as pl

run = latscope.sim("imx8mq-cpuidle")  # kernel 6.6: the reader's CPU idles 80 % of the time
pairs = run.pairs()  # the scenario's own analyses: each read request, each idle exit
print(pairs.group_by("analysis", maintain_order=True).agg(
    n=pl.len(), mean_us=pl.col("latency_ns").mean() / 1e3, p99_us=pl.col("latency_ns").quantile(0.99, "linear") / 1e3))

# %%
def reads(label, settings):
    pairs = latscope.sim("imx8mq-cpuidle", settings=settings).pairs()
    block = pairs.filter(pl.col("analysis") == "block")
    exits = pairs.filter(pl.col("analysis") == "idle-exit")["latency_ns"]
    span_s = block["end_s"].max() - block["start_s"].min()
    return {"run": label, "read_mean_us": block["latency_ns"].mean() / 1e3,
            "exit_p50_us": exits.median() / 1e3, "MiB_s": block.height * 64 / 1024 / span_s}

print(pl.DataFrame([
    reads("6.1: idle 25 %", {"idle_probability": 0.25}),
    reads("6.6: idle 80 %", {}),
    reads("6.6, exit 80 us", {"socs.imx8mq.deep_exit_us": 80}),
    reads("6.6 + PM QoS", {"pm_qos": "on"}),
]))
