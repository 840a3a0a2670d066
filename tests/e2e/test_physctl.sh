#!/bin/sh
# test_physctl.sh - physctl smoke test against the real physd: every command once, its JSON
# output, and the exit status of failures (1 request failed, 2 usage, 3 cannot connect).
# Env (set by meson): PHYSD_BIN, PHYSCTL_BIN. Exits 77 (skip) when the daemon is not built.
set -u

if [ ! -x "${PHYSD_BIN:-}" ]; then
  echo "PHYSD_BIN is not an executable physd: skipping"
  exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/physctl-e2e-XXXXXX")
sock="$dir/physd.sock"
fails=0
daemon=""

cleanup() {
  if [ -n "$daemon" ]; then
    kill -TERM "$daemon" 2>/dev/null
    wait "$daemon"
    rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "FAIL: physd exited with $rc after SIGTERM"
      cat "$dir/physd.log"
      fails=$((fails + 1))
    fi
    daemon=""
  fi
  rm -rf "$dir"
}
trap 'cleanup; exit 1' INT TERM

cat > "$dir/world.xml" <<'XML'
<mujoco model="physctl">
  <option timestep="0.001"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="box" pos="0 0 0.5"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body name="ball" pos="0.5 0 1"><freejoint/><geom type="sphere" size="0.1"/></body>
  </worldbody>
</mujoco>
XML

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PHYSD_BIN" --socket "$sock" --tcp "$port" --world "$dir/world.xml" --allowed-root "$dir" \
  --threads 1 > "$dir/physd.log" 2>&1 &
daemon=$!
i=0
until grep -q listening "$dir/physd.log" 2>/dev/null && [ -S "$sock" ]; do
  i=$((i + 1))
  if [ "$i" -gt 200 ] || ! kill -0 "$daemon" 2>/dev/null; then
    echo "FAIL: physd did not start"
    cat "$dir/physd.log"
    daemon=""
    cleanup
    exit 1
  fi
  sleep 0.05
done

# run NAME EXPECTED_RC PATTERN ARGS...: physctl ARGS must exit EXPECTED_RC and print PATTERN
run() {
  name=$1 want=$2 pattern=$3
  shift 3
  out=$("$PHYSCTL_BIN" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL: $name: exit $rc, expected $want: physctl $*"
    echo "$out" | head -5
    fails=$((fails + 1))
  elif [ -n "$pattern" ] && ! printf '%s\n' "$out" | grep -q -- "$pattern"; then
    echo "FAIL: $name: output lacks '$pattern': physctl $*"
    echo "$out" | head -5
    fails=$((fails + 1))
  else
    echo "ok: $name"
  fi
}

P="--socket $sock"
run help 0 "usage: physctl" --help
run help-ctrl 0 "ctrl ID|NAME VALUE" --help
run help-joints 0 "state \[--body ID\]... \[--joints\]" --help
run ping 0 '"rtt_us"' $P ping
run info 0 '"name":"box"' $P info
run load 0 '"bodies":2' $P load "$dir/world.xml"
run load-data 0 '"bodies":2' $P load "$dir/world.xml" --data
run load-outside 1 "physctl: load" $P load /etc/hostname
run step 0 '"step":10' $P step 10
run state 0 '"bodies":\[{"id":' $P state
run state-body 0 '"id":1' $P state --body 1
run state-missing 1 "NOT_FOUND" $P state --body 99
run stats 0 '"steps"' $P stats
run snapshot 0 '"bytes"' $P snapshot "$dir/snap.bin"
run step-more 0 '"step":15' $P step 5
run restore 0 '"restored"' $P restore "$dir/snap.bin"
run state-restored 0 '"step":10' $P state
run restore-junk 1 "INVALID_ARGUMENT" $P restore "$dir/world.xml"
run reset 0 '"ok":true' $P reset
run mode-realtime 0 '"mode":"realtime"' $P mode realtime --rtf 2
run step-running 1 "INCORRECT_STATE" $P step
run pause 0 '"ok":true' $P pause
run resume 0 '"ok":true' $P resume
run watch 0 '"subscription_id"' $P watch --hz 50 --count 3
lines=$("$PHYSCTL_BIN" $P watch --hz 100 --count 4 | wc -l)
if [ "$lines" -ne 4 ]; then
  echo "FAIL: watch --count 4 printed $lines lines"
  fails=$((fails + 1))
fi
run mode-max 0 '"mode":"max"' $P mode max
run mode-lockstep 0 '"mode":"lockstep"' $P mode lockstep
run latency 0 '"p99_us"' $P latency --cycles 300
run latency-tcp 0 '"transport":"tcp"' $P latency --cycles 300 --tcp "127.0.0.1:$port"
run tcp-ping 0 '"rtt_us"' --tcp "127.0.0.1:$port" ping
# protocol 1.1: actuator controls, joint state, model info extras, URDF loads
src=${PHYSD_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
cp "$src/configs/worlds/arm_slider.xml" "$src/tests/data/urdf/arm2.urdf" "$dir/"
run load-arm 0 '"bodies":8' $P load "$dir/arm_slider.xml"
run load-arm-notices 0 '"notices":\[\]' $P load "$dir/arm_slider.xml"
run info-actuator 0 '"actuators":\[{"id":0,"name":"shoulder_motor","joint":1,"ctrl_limited":true,"ctrl_range":\[-1,1\]}\]' $P info
run info-joint-range 0 '"id":4,"name":"slider","type":"slide","body":4,"link":"carriage","nq":1,"nv":1,"range":\[-0.5,0.5\]' $P info
run info-sensors 0 '"sensors":\[\],"notices":\[\]' $P info
run ctrl-name 0 '"ok":true,"actuators":1,"seq":5' $P ctrl shoulder_motor 0.5 --seq 5
run ctrl-id 0 '"ok":true,"actuators":1,"seq":0' $P ctrl 0 -1
run ctrl-twice 1 "INVALID_ARGUMENT" $P ctrl 0 0.1 shoulder_motor 0.2
run ctrl-unknown-id 1 "NOT_FOUND" $P ctrl 3 0.5
run ctrl-unknown-name 1 "NOT_FOUND" $P ctrl elbow_motor 0.5
run ctrl-nan 2 "finite number" $P ctrl 0 nan
run ctrl-no-value 2 "has no VALUE" $P ctrl shoulder_motor
run ctrl-nothing 2 "expected ID|NAME VALUE pairs" $P ctrl
run ctrl-bad-seq 2 "bad --seq" $P ctrl 0 1 --seq x
# a control belongs to its client: physctl's ended with its connection (released to 0)
run state-actuators 0 '"joints":\[{"id":4,"qpos":\[0\],"qvel":\[0\],"force":0}\],"actuator_force":\[0\]' \
  $P state --body 4 --joint 4 --actuators
run state-joint-missing 1 "NOT_FOUND" $P state --joint 5
run step-arm 0 '"step":100' $P step 100
# joint state agrees with the bodies: the carriage (rail at x = 0) sits at its qpos, the elbow
# 0.4 m from the shoulder at angle q1 (the arm has fallen: q1 > 0)
out=$("$PHYSCTL_BIN" $P state --joints)
if printf '%s\n' "$out" | /usr/bin/python3 -c '
import json, math, sys
s = json.load(sys.stdin)
j = {x["id"]: x for x in s["joints"]}
b = {x["id"]: x for x in s["bodies"]}
assert sorted(j) == [1, 2, 4], sorted(j)
assert all(len(x["qpos"]) == 1 and len(x["qvel"]) == 1 for x in j.values())
q1 = j[1]["qpos"][0]
assert 0.1 < q1 < math.pi / 2 + 0.01, q1
assert abs(b[2]["pos"][0] - 0.4 * math.cos(q1)) < 1e-6, (b[2]["pos"], q1)
assert abs(b[2]["pos"][2] - (1 - 0.4 * math.sin(q1))) < 1e-6, (b[2]["pos"], q1)
assert abs(b[4]["pos"][0] - j[4]["qpos"][0]) < 1e-9
print("q1 = %.6f, elbow at (%.6f, %.6f)" % (q1, b[2]["pos"][0], b[2]["pos"][2]))
'; then
  echo "ok: state-joints-numbers"
else
  echo "FAIL: state --joints numbers: $out" | head -c 600
  echo
  fails=$((fails + 1))
fi
run load-urdf 0 "root link 'base_link' is fixed to the world" $P load "$dir/arm2.urdf"
run load-urdf-float 0 "root link 'base_link' is free" $P load "$dir/arm2.urdf" --floating-base --ground
run info-urdf-free 0 '"id":0,"name":"","type":"free","body":0,"link":"base_link","nq":7,"nv":6' $P info
run info-urdf-notices 0 '"notices":\[.*vendor extension element <gazebo> ignored' $P info
run state-urdf-free 0 '"joints":\[{"id":0,"qpos":\[0,0,0,1,0,0,0\],"qvel":\[0,0,0,0,0,0\],"force":0}' \
  $P state --joints
run load-urdf-data 0 '"bodies":3' $P load "$dir/arm2.urdf" --data --format urdf
run load-urdf-pkg-outside 1 "physctl: load" $P load "$dir/arm2.urdf" --package-path /etc
run load-bad-format 2 "unknown --format" $P load "$dir/arm2.urdf" --format obj
run load-bad-option 2 "unknown option" $P load "$dir/arm2.urdf" --frobnicate
# protocol 1.2: the solver table, SetSolver, and the solver in force in info / stats
run solvers 0 '^\[{"name":"subadmm","summary":"[^"]\{10,\}","options":\[{"name":"subadmm.penalty_rule".*{"name":"subadmm-nosub".*{"name":"pgs","summary":"[^"]\{10,\}","options":\[{"name":"pgs.relaxation","default":1,"range":"(0, 2)","integer":false,"summary":"[^"]*"},{"name":"pgs.dense_rows","default":48,[^}]*"integer":true,"summary":"[^"]*"}\]},{"name":"sap","summary":"[^"]\{10,\}","options":\[{"name":"sap.beta".*}\]}\]$' $P solvers
run solvers-canal-option 0 '{"name":"canal.beta_scale","default":30,"range":"\[0, inf)","integer":false' $P solvers
run solver-set 0 '^{"name":"subadmm-nobody","max_iterations":25,"tolerance":0,"options":{"subadmm.penalty_rule":0,"subadmm.beta_scale":4,"subadmm.over_relaxation":1.8,"subadmm.adapt_gamma":10,"subadmm.anderson":5,"subadmm.anderson_iterations":30}}$' \
  $P solver subadmm-nobody --iterations 25 --tolerance 0
run solver-keep-name 0 '^{"name":"subadmm-nobody","max_iterations":30,"tolerance":0,"options":{' \
  $P solver - --iterations 30
run solver-stepped 0 '"stepped":2' $P step 2
run stats-solver 0 '"solver":{"name":"subadmm-nobody","max_iterations":30,"tolerance":0,"options":{[^}]*}},"last_step":{"solver":"subadmm-nobody"' $P stats
run info-solver 0 '"solver":{"name":"subadmm-nobody","max_iterations":30,"tolerance":0,"options":{[^}]*}}}$' $P info
run solver-unknown 1 'INVALID_ARGUMENT: solver: unknown solver "warp"; known solvers: subadmm, subadmm-nosub, subadmm-nobody, canal, pgs' \
  $P solver warp
run solver-zero-iterations 1 "INVALID_ARGUMENT: max_iterations must be 1" $P solver subadmm --iterations 0
run solver-negative-tolerance 1 "INVALID_ARGUMENT: tolerance must be finite and >= 0" \
  $P solver subadmm --tolerance -1
run solver-unchanged 0 '"solver":{"name":"subadmm-nobody","max_iterations":30,"tolerance":0' $P stats
run solver-no-name 2 "solver: expected NAME" $P solver
run solver-bad-arg 2 "solver: bad argument" $P solver subadmm --fast
# protocol 1.6: solver options (--set NAME=VALUE, an enumeration by name)
run solver-set-options 0 '"options":{"canal.beta0":10000,"canal.beta_scale":12,"canal.kappa":10,.*"canal.newton_max":3,' \
  $P solver canal --set canal.beta_scale=12 --set canal.newton_max=3
run solver-set-enum 0 '"subadmm.penalty_rule":1,' $P solver subadmm --set subadmm.penalty_rule=paper
run solver-option-range 1 'INVALID_ARGUMENT: solver option canal.zeta must be in (0, 1), got 1' \
  $P solver canal --set canal.zeta=1
run solver-option-other 1 'INVALID_ARGUMENT: solver option canal.kappa is an option of the canal solvers, not of pgs' \
  $P solver pgs --set canal.kappa=5
run solver-option-unchanged 0 '"solver":{"name":"subadmm",.*"subadmm.penalty_rule":1,' $P stats
run solver-option-syntax 2 "solver: --set: expected NAME=VALUE" $P solver canal --set canal.kappa
run solver-option-value 2 "bad value 'fast' for canal.kappa" $P solver canal --set canal.kappa=fast
run load-solver 0 '"bodies":' $P load "$dir/arm2.urdf" --solver subadmm-nosub --iterations 40
run info-load-solver 0 '"solver":{"name":"subadmm-nosub","max_iterations":40,' $P info
run load-solver-option 0 '"bodies":' $P load "$dir/arm2.urdf" --solver pgs --solver-option pgs.relaxation=1.5
run info-load-option 0 '"solver":{"name":"pgs",.*"options":{"pgs.relaxation":1.5,"pgs.dense_rows":48}}' $P info
run load-solver-option-bad 1 "pgs.relaxation must be in (0, 2)" $P load "$dir/arm2.urdf" --solver pgs --solver-option pgs.relaxation=2
run load-solver-unknown 1 "known solvers: subadmm, subadmm-nosub, subadmm-nobody, canal, pgs" $P load "$dir/arm2.urdf" --solver warp
# protocol 1.3: a menagerie-style robot by path (include, meshdir, meshes beside the file),
# joints by their file names, keyframes, joint state, and a script on one connection
cp -r "$PHYSD_SOURCE_ROOT/tests/data/menagerie_bot" "$dir/bot"
run load-menagerie 0 '"bodies":5' $P load "$dir/bot/scene.xml"
run info-joint-names 0 '"name":"FR_knee_joint","type":"hinge","body":[0-9]*,"link":"FR_calf","nq":1,"nv":1' $P info
run info-keyframes 0 '"keyframes":\["home"\]' $P info
run keyframe 0 '^{"ok":true}$' $P keyframe home
run keyframe-unknown 1 'NOT_FOUND: keyframe "crouch": no such keyframe' $P keyframe crouch
run joint-state 0 '^{"ok":true}$' $P joint-state FR_hip_joint RR_hip_joint --qpos 0.2,-0.2
run joint-state-length 1 'INVALID_ARGUMENT: qpos has 1 values, the joints take 2' \
  $P joint-state FR_hip_joint RR_hip_joint --qpos 0.2
run joint-state-unknown 1 'NOT_FOUND: joint "LF_HAA": no such joint' $P joint-state LF_HAA --qpos 0
run joint-state-base 0 '^{"ok":true}$' $P joint-state 0 --qpos 0,0,0.5,1,0,0,0
run joint-state-no-values 2 'needs --qpos or --qvel' $P joint-state FR_hip_joint
# controls set in a script hold for its steps (separate physctl runs release them at exit):
# the hip's position actuator drives it from 0 toward 1.2 rad
cat > "$dir/drive.txt" <<'EOF2'
# lock-step: pose, drive the front hip, step, read the joints
keyframe home
joint-state FR_hip_joint --qpos 0 --qvel 0
ctrl FR_hip 1.2
step 300
state --joints
EOF2
out=$("$PHYSCTL_BIN" $P script "$dir/drive.txt" 2>&1)
hip_id=$("$PHYSCTL_BIN" $P info | /usr/bin/python3 -c '
import json, sys
print([j["id"] for j in json.load(sys.stdin)["joints"] if j["name"] == "FR_hip_joint"][0])')
hip=$(printf '%s\n' "$out" | tail -1 | /usr/bin/python3 -c '
import json, sys
print([j for j in json.load(sys.stdin)["joints"] if j["id"] == int(sys.argv[1])][0]["qpos"][0])' \
  "$hip_id" 2>&1)
if /usr/bin/python3 -c "import sys; sys.exit(0 if 0.8 < float(sys.argv[1]) < 1.4 else 1)" "$hip" 2>/dev/null; then
  echo "ok: script-drive (hip at $hip rad after 300 steps toward 1.2)"
else
  echo "FAIL: script-drive: hip at '$hip' rad, expected 0.8 .. 1.4"
  printf '%s\n' "$out" | head -5
  fails=$((fails + 1))
fi
printf 'ping\nstep -1\n' > "$dir/bad.txt"
run script-bad-line 2 'script line 2: ' $P script "$dir/bad.txt"
run script-missing 2 'script: ' $P script "$dir/none.txt"
run bad-command 2 "unknown command" $P frobnicate
run bad-step 2 "positive integer" $P step -3
run bad-mode 2 "unknown mode" $P mode sideways
run no-command 2 "missing COMMAND" $P
run no-daemon 3 "cannot connect" --socket "$dir/none.sock" ping

cleanup
if [ "$fails" -ne 0 ]; then
  echo "$fails failure(s)"
  exit 1
fi
echo "all physctl checks passed"
