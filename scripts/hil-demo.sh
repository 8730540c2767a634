#!/usr/bin/env bash
# The pool rig in hardware in the loop, without hardware: rigs/hil/pool_hil.toml with
# the camera device playing a video recorded from the simulator and the MCU bridge
# driving the MCU emulator on a pseudo-terminal (docs/devices.md, "HIL rigs").
#
#   scripts/hil-demo.sh [SECONDS]        # default 20 s of simulated (= wall-clock) time
#
# 1. records runs/hil/pool_camera.avi (scripts/record_pool_video.py) if it is missing
#    or, by its .json, shorter than SECONDS;
# 2. starts the MCU emulator, linked at /tmp/moonpool-mcu (the bridge's port in the rig;
#    MCU_LINK=PATH to use another path);
# 3. runs the rig in real time for SECONDS (moonpool run ... --realtime --until SECONDS);
# 4. stops the emulator (it prints its counters and final thrust);
# 5. re-runs the session offline, flat out, with the bridge replaced by its recording
#    (run = "replay") and the camera playing the video again, and compares the
#    localizer's, filter's, controller's and allocator's messages with the session's.
#
# Outputs: runs/hil/demo-TIME/{session,replay}/ (summary.json, recording.mcap, plots/)
# and runs/hil/demo-TIME/emulator.jsonl.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-$ROOT/.venv/bin/python}
SECONDS_RUN=${1:-20}
LINK=${MCU_LINK:-/tmp/moonpool-mcu}
RIG=rigs/hil/pool_hil.toml
VIDEO=runs/hil/pool_camera.avi
OUT=runs/hil/demo-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"

# -- 1. the video ---------------------------------------------------------------------
# Its length is in the .json the script writes beside it; a video without one (brought
# from elsewhere) is used as it is.
have=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['seconds'])" \
        "$VIDEO.json" 2>/dev/null || echo unknown)
if [ ! -f "$VIDEO" ] || { [ "$have" != unknown ] && \
        "$PY" -c "import sys; sys.exit(float(sys.argv[1]) >= float(sys.argv[2]))" \
        "$have" "$SECONDS_RUN"; }; then
    echo "== recording $VIDEO (${SECONDS_RUN} s of rigs/pool.toml)"
    "$PY" scripts/record_pool_video.py --seconds "$SECONDS_RUN" --out "$VIDEO" --no-evaluate
else
    echo "== video: $VIDEO (${have} s)"
fi

# -- 2. the MCU emulator ----------------------------------------------------------------
if [ -e "$LINK" ] || [ -L "$LINK" ]; then
    echo "error: $LINK exists (another emulator running, or a stale link): remove it, or" \
         "run MCU_LINK=/tmp/my-mcu $0" >&2
    exit 2
fi
"$PY" -m moonpool.components.bridges.mcu_emulator --pty --link "$LINK" --quiet \
    > "$OUT/emulator.jsonl" 2> "$OUT/emulator.log" &
EMU=$!
stop_emulator() {
    if kill -0 "$EMU" 2>/dev/null; then
        kill -TERM "$EMU" && wait "$EMU" || true
    fi
}
trap stop_emulator EXIT
for _ in $(seq 100); do
    grep -q '"ready"' "$OUT/emulator.jsonl" 2>/dev/null && break
    kill -0 "$EMU" 2>/dev/null || { cat "$OUT/emulator.log" >&2; exit 1; }
    sleep 0.1
done
echo "== MCU emulator (pid $EMU): $(head -1 "$OUT/emulator.jsonl")"

# -- 3. the session ----------------------------------------------------------------------
echo "== $RIG, real time, ${SECONDS_RUN} s"
status=0
"$PY" -m moonpool.orchestrator.cli run "$RIG" --realtime --until "$SECONDS_RUN" \
    --set "components.thrusters.parameters.port=$LINK" --out "$OUT/session" || status=$?

# -- 4. stop the emulator ------------------------------------------------------------------
stop_emulator
trap - EXIT
"$PY" - "$OUT/emulator.jsonl" <<'EOF'
import json, sys
events = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
end = [e for e in events if e["event"] == "exit"]
if end:
    e = end[-1]
    c = e["counters"]
    print(f"== MCU emulator stopped: {c['commands_applied']} SET_SPEEDS applied, {c['stops']} STOP, "
          f"{c['tx_frames']} telemetry frames sent, {c['watchdog_trips']} watchdog trips; "
          f"thrust at exit {max(map(abs, e['thrust_n'])):.3f} N (largest of {len(e['thrust_n'])})")
EOF
if [ "$status" -ne 0 ]; then
    echo "the session failed (exit $status): $OUT/session/summary.json" >&2
    exit "$status"
fi

# -- 5. the session replayed offline -------------------------------------------------------
echo "== offline: the bridge replayed from the session's recording, the camera playing the video"
"$PY" -m moonpool.orchestrator.cli run "$RIG" --until "$SECONDS_RUN" --quiet \
    --set components.thrusters.run=replay \
    --set "components.thrusters.recording=$ROOT/$OUT/session/recording.mcap" \
    --out "$OUT/replay"
"$PY" - "$OUT/session/recording.mcap" "$OUT/replay/recording.mcap" <<'EOF'
import sys
from moonpool.orchestrator.recording import component_topics, digest_of_recording, recording_info
names = ("localizer", "ekf", "controller", "allocator", "vehicle")
def digest(path):
    topics = recording_info(path).topics
    return digest_of_recording(path, [t for n in names for t in component_topics(topics, n)])
same = digest(sys.argv[1]) == digest(sys.argv[2])
print(f"== {', '.join(names)}: replayed offline {'identical to' if same else 'DIFFERENT from'} the session")
sys.exit(0 if same else 1)
EOF

echo "== outputs: $OUT/session (summary.json, recording.mcap, plots/), $OUT/replay, $OUT/emulator.jsonl"
