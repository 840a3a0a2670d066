// viewer.js - the page's client of physd's Foxglove WebSocket endpoint (docs/viewer.md):
// subscribes to /scene (foxglove.SceneUpdate, JSON) and /tf (foxglove.FrameTransforms, JSON),
// and to /contacts (arrows, foxglove.SceneUpdate) while its box is ticked,
// draws the geoms with three.js (z up, frame "world"), shows simulation time from the `time`
// messages and the real-time factor measured from them, and calls physd's services
// /physd/pause, /physd/resume, /physd/step and /physd/reset from its buttons.
//
// URL arguments: token=T (passed on to the WebSocket), cam=x,y,z and look=x,y,z (a fixed
// camera, e.g. for screenshots; default 2.5,-3.5,1.8 looking at 0,0,0.3), fov=DEG (vertical, default
// 50), flat=1 (unlit colours: each pixel of a geom is its colour exactly), hud=0 (no overlay),
// contacts=1 (start with the contact arrows shown).
"use strict";
(function () {
  const args = new URLSearchParams(location.search);
  const vec = (s, d) => {
    const v = (s || "").split(",").map(Number);
    return v.length === 3 && v.every(Number.isFinite) ? v : d;
  };
  const flat = args.get("flat") === "1";
  const $ = (id) => document.getElementById(id);
  if (args.get("hud") === "0") $("hud").style.display = "none";

  function say(text, isError) {
    const s = $("status");
    s.textContent = text;
    s.className = isError ? "err" : "";
  }

  if (typeof THREE === "undefined") {
    say("three.js did not load (/three/three.min.js): install Debian's libjs-three", true);
    return;
  }

  // ---- three.js scene ---------------------------------------------------------------------
  const view = $("view");
  const renderer = new THREE.WebGLRenderer({ antialias: !flat, preserveDrawingBuffer: true });
  renderer.setPixelRatio(1);
  renderer.setSize(window.innerWidth, window.innerHeight);
  renderer.setClearColor(0x1e2227);
  view.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  const camera = new THREE.PerspectiveCamera(Number(args.get("fov")) || 50,
    window.innerWidth / window.innerHeight, 0.01, 1000);
  camera.up.set(0, 0, 1);
  const cam = vec(args.get("cam"), [2.5, -3.5, 1.8]), look = vec(args.get("look"), [0, 0, 0.3]);
  camera.position.set(cam[0], cam[1], cam[2]);
  camera.lookAt(look[0], look[1], look[2]);
  scene.add(new THREE.AmbientLight(0xffffff, 0.45));
  const sun = new THREE.DirectionalLight(0xffffff, 0.75);
  sun.position.set(3, -4, 8);
  scene.add(sun);
  window.addEventListener("resize", () => {
    camera.aspect = window.innerWidth / window.innerHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(window.innerWidth, window.innerHeight);
    dirty = true;
  });

  // one group per frame ("world", "body/ID"): /tf moves it, /scene fills it
  const frames = new Map();
  function frame(id) {
    let g = frames.get(id);
    if (!g) {
      g = new THREE.Group();
      frames.set(id, g);
      scene.add(g);
    }
    return g;
  }
  const unitBox = new THREE.BoxBufferGeometry(1, 1, 1);
  const unitSphere = new THREE.SphereBufferGeometry(0.5, 32, 16);
  const unitCyl = new THREE.CylinderBufferGeometry(0.5, 0.5, 1, 32);
  unitCyl.rotateX(Math.PI / 2); // three's cylinders stand on y, Foxglove's on z
  function material(c) {
    const color = new THREE.Color(c.r, c.g, c.b);
    return flat ? new THREE.MeshBasicMaterial({ color }) : new THREE.MeshLambertMaterial({ color });
  }
  function addPrims(group, list, geom) {
    for (const p of list || []) {
      const m = new THREE.Mesh(geom, material(p.color || { r: 0.7, g: 0.7, b: 0.7 }));
      const q = p.pose.orientation, t = p.pose.position;
      m.position.set(t.x, t.y, t.z);
      m.quaternion.set(q.x, q.y, q.z, q.w);
      m.scale.set(p.size.x, p.size.y, p.size.z);
      group.add(m);
    }
  }
  // a mesh's hull: its own geometry (disposed with the entity), the corners three by three
  function addTriangles(group, list) {
    for (const p of list || []) {
      const pos = new Float32Array(3 * p.points.length);
      p.points.forEach((v, i) => pos.set([v.x, v.y, v.z], 3 * i));
      const geom = new THREE.BufferGeometry();
      geom.setAttribute('position', new THREE.BufferAttribute(pos, 3));
      geom.computeVertexNormals();
      const m = new THREE.Mesh(geom, material(p.color || { r: 0.7, g: 0.7, b: 0.7 }));
      m.userData.ownGeometry = true;
      const q = p.pose.orientation, t = p.pose.position;
      m.position.set(t.x, t.y, t.z);
      m.quaternion.set(q.x, q.y, q.z, q.w);
      group.add(m);
    }
  }
  function onScene(msg) {
    for (const d of msg.deletions || []) {
      const clear = (g) => { // the shared unit geometries stay; each mesh's material goes
        while (g.children.length) {
          g.children[0].material.dispose();
          if (g.children[0].userData.ownGeometry) g.children[0].geometry.dispose();
          g.remove(g.children[0]);
        }
      };
      if (d.type === 1) frames.forEach(clear);
      else if (frames.has(d.id)) clear(frames.get(d.id));
    }
    for (const e of msg.entities || []) {
      const g = frame(e.frame_id);
      addPrims(g, e.cubes, unitBox);
      addPrims(g, e.spheres, unitSphere);
      addPrims(g, e.cylinders, unitCyl);
      addTriangles(g, e.triangles);
    }
    dirty = true;
  }
  // contact arrows: the one "contacts" entity, replaced by each message
  const arrows = new THREE.Group();
  scene.add(arrows);
  function clearArrows() {
    while (arrows.children.length) {
      const a = arrows.children[0];
      a.traverse((o) => { if (o.material) o.material.dispose(); });
      arrows.remove(a);
    }
    dirty = true;
  }
  const xAxis = new THREE.Vector3(1, 0, 0);
  function onContacts(msg) {
    clearArrows();
    for (const e of msg.entities || []) {
      for (const a of e.arrows || []) {
        const p = a.pose.position, q = a.pose.orientation;
        const dir = xAxis.clone().applyQuaternion(new THREE.Quaternion(q.x, q.y, q.z, q.w));
        const c = a.color;
        const len = a.shaft_length + a.head_length;
        const h = new THREE.ArrowHelper(dir, new THREE.Vector3(p.x, p.y, p.z), len,
          new THREE.Color(c.r, c.g, c.b), a.head_length, a.head_diameter);
        // drawn over the geoms: a resting contact's force points into the body it holds up
        h.traverse((o) => { if (o.material) o.material.depthTest = false; o.renderOrder = 1; });
        arrows.add(h);
      }
    }
  }

  function onTf(msg) {
    for (const t of msg.transforms || []) {
      const g = frame(t.child_frame_id);
      g.position.set(t.translation.x, t.translation.y, t.translation.z);
      g.quaternion.set(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w);
    }
    dirty = true;
  }

  let dirty = true;
  function draw() {
    if (dirty) {
      renderer.render(scene, camera);
      dirty = false;
    }
    requestAnimationFrame(draw);
  }
  requestAnimationFrame(draw);

  // ---- clock and measured real-time factor --------------------------------------------------
  // sim time over wall time across the last two seconds of `time` messages; the first message
  // (the newest state when the page connected, possibly old) and a jump back (a reset) restart it
  const clock = []; // [wall ms, sim s]
  let firstTime = true;
  function onTime(simNs) {
    const now = performance.now(), t = Number(simNs) / 1e9;
    $("simtime").textContent = t.toFixed(3);
    if (firstTime || (clock.length && t < clock[clock.length - 1][1])) {
      firstTime = false;
      clock.length = 0;
      return;
    }
    clock.push([now, t]);
    while (clock.length > 2 && now - clock[0][0] > 2000) clock.shift();
    const [w0, s0] = clock[0];
    if (now - w0 >= 250) $("rtf").textContent = ((t - s0) / ((now - w0) / 1000)).toFixed(2);
  }
  setInterval(() => { // a paused world sends no time: the factor falls to 0
    const now = performance.now();
    if (clock.length && now - clock[clock.length - 1][0] > 1000) {
      $("rtf").textContent = "0.00";
      clock.length = 0;
    }
  }, 500);

  // ---- foxglove.websocket.v1 -------------------------------------------------------------
  const token = args.get("token");
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/" +
    (token ? "?token=" + encodeURIComponent(token) : "");
  const ws = new WebSocket(url, ["foxglove.websocket.v1"]);
  ws.binaryType = "arraybuffer";
  const subs = new Map(); // subscription id -> handler
  const services = new Map(); // name -> id
  let nextCall = 1;
  const calls = new Map(); // call id -> service name
  const dec = new TextDecoder(), enc = new TextEncoder();

  ws.onopen = () => { $("conn").textContent = "connected"; };
  ws.onclose = (e) => {
    $("conn").textContent = "disconnected";
    say("connection closed" + (e.reason ? ": " + e.reason : ""), true);
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data === "string") return onText(JSON.parse(ev.data));
    const dv = new DataView(ev.data);
    const op = dv.getUint8(0);
    if (op === 1) { // message data: subscription id, log time, payload
      const h = subs.get(dv.getUint32(1, true));
      if (h) h(JSON.parse(dec.decode(new Uint8Array(ev.data, 13))));
    } else if (op === 2) { // time
      onTime(dv.getBigUint64 ? dv.getBigUint64(1, true)
        : dv.getUint32(1, true) + dv.getUint32(5, true) * 4294967296);
    } else if (op === 3) { // service call response: service id, call id, encoding, payload
      const callId = dv.getUint32(5, true), elen = dv.getUint32(9, true);
      const name = calls.get(callId);
      calls.delete(callId);
      const body = dec.decode(new Uint8Array(ev.data, 13 + elen));
      say(name + ": " + body, false);
    }
  };
  function onText(m) {
    if (m.op === "advertise") {
      const want = { "/scene": onScene, "/tf": onTf };
      const list = [];
      for (const ch of m.channels) {
        if (want[ch.topic] && ch.encoding === "json") {
          const id = list.length + 1;
          subs.set(id, want[ch.topic]);
          list.push({ id, channelId: ch.id });
        }
        if (ch.topic === "/contacts") contactsChannel = ch.id;
      }
      ws.send(JSON.stringify({ op: "subscribe", subscriptions: list }));
      showContacts();
    } else if (m.op === "advertiseServices") {
      for (const s of m.services) services.set(s.name, s.id);
    } else if (m.op === "status") {
      say(m.message, m.level >= 2);
    } else if (m.op === "serviceCallFailure") {
      calls.delete(m.callId);
      say(m.message, true);
    }
  }
  function call(name, request) {
    const id = services.get(name);
    if (id === undefined || ws.readyState !== WebSocket.OPEN) {
      say(name + ": not offered by this server", true);
      return;
    }
    const e = enc.encode("json"), p = enc.encode(JSON.stringify(request || {}));
    const buf = new Uint8Array(13 + e.length + p.length), dv = new DataView(buf.buffer);
    const callId = nextCall++;
    dv.setUint8(0, 2);
    dv.setUint32(1, id, true);
    dv.setUint32(5, callId, true);
    dv.setUint32(9, e.length, true);
    buf.set(e, 13);
    buf.set(p, 13 + e.length);
    calls.set(callId, name);
    ws.send(buf);
  }
  // /contacts while the box is ticked (subscription id 100); contacts cost the server a capture
  // per frame, so they are off unless asked for
  let contactsChannel = null, contactsOn = false;
  $("contacts").checked = args.get("contacts") === "1";
  function showContacts() {
    const want = $("contacts").checked;
    if (contactsChannel === null || ws.readyState !== WebSocket.OPEN || want === contactsOn) return;
    contactsOn = want;
    if (want) {
      subs.set(100, onContacts);
      ws.send(JSON.stringify({ op: "subscribe", subscriptions: [{ id: 100, channelId: contactsChannel }] }));
    } else {
      subs.delete(100);
      ws.send(JSON.stringify({ op: "unsubscribe", subscriptionIds: [100] }));
      clearArrows();
    }
  }
  $("contacts").onchange = showContacts;
  $("pause").onclick = () => call("/physd/pause");
  $("resume").onclick = () => call("/physd/resume");
  $("step").onclick = () => call("/physd/step", { n: 1 });
  $("reset").onclick = () => call("/physd/reset");
})();
