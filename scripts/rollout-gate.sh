#!/usr/bin/env bash
# Gate a rollout (docs/eval.md "Gate a rollout"): before this checkout's build takes traffic,
#  1. every open job of the fleet, and every recent history, replays on it (handrail replay),
#  2. the recent jobs scored as recorded and walked through its pipelines (handrail eval --replay):
#     at most MAX_MOVED of them may route differently now,
#  3. the dataset's fresh jobs run through it on a dev server of its own and are compared with the
#     results of the build serving traffic now (BASE_RESULTS), under GATES.
# Exits non-zero when a step fails. Writes everything to OUT (keep head.json: it is the next
# rollout's BASE_RESULTS).
#
# Environment: TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE / HANDRAIL_TASK_QUEUE of the fleet;
# RECENT (visibility query, default: jobs closed in the last RECENT_HOURS, 24); DATASET (default
# data/eval/built-in.jsonl); BASE_RESULTS (optional); GATES (one gate a line);
# MAX_MOVED (default 0); OUT (default eval-gate); HANDRAIL (default: npx handrail).
set -euo pipefail
OUT=${OUT:-eval-gate}
DATASET=${DATASET:-data/eval/built-in.jsonl}
MAX_MOVED=${MAX_MOVED:-0}
HANDRAIL=${HANDRAIL:-npx handrail}
if [[ -z "${RECENT:-}" ]]; then
  since=$(date -u -d "${RECENT_HOURS:-24} hours ago" +%Y-%m-%dT%H:%M:%SZ)
  RECENT="CloseTime > \"$since\""
fi
GATES=${GATES:-$'completed>=-2pt\npass_rate>=-2pt\ncost_per_job<=+10%\nlatency_ms.p95<=+50%'}
mkdir -p "$OUT"

# The open jobs first: a rolling replace (docs/cluster.md, the route handrail takes) moves each of
# them onto this build at its next workflow task — a job waiting days for a human included — so
# each must replay here, whatever RECENT says.
echo "== 1. replay the fleet's open jobs, then its recent histories, on this build ($RECENT)"
$HANDRAIL replay --query 'ExecutionStatus="Running"'
$HANDRAIL replay --query "$RECENT"

echo "== 2. score them as recorded, and walk them through this build's pipelines"
$HANDRAIL eval --query "$RECENT" --replay --out "$OUT/recent.json"
# A bound without a sign is B's own value: comparing the run with itself gates its absolute values.
$HANDRAIL eval compare "$OUT/recent.json" "$OUT/recent.json" --gate "replay_moved<=$MAX_MOVED" >/dev/null || {
  echo "more than $MAX_MOVED recent job(s) route differently on this build: handrail replay --diff --query '$RECENT' names the hops" >&2
  exit 1
}

echo "== 3. fresh jobs through this build ($DATASET)"
$HANDRAIL eval --jobs "$DATASET" --out "$OUT/head.json"
if [[ -n "${BASE_RESULTS:-}" ]]; then
  gate_args=()
  while IFS= read -r gate; do [[ -n "$gate" ]] && gate_args+=(--gate "$gate"); done <<<"$GATES"
  $HANDRAIL eval compare "$BASE_RESULTS" "$OUT/head.json" "${gate_args[@]}" --html "$OUT/report.html"
else
  echo "no BASE_RESULTS: nothing to compare with; keep $OUT/head.json for the next rollout"
fi
