// jax-js: every new value of a JavaScript number in an op compiles new Wasm kernels: scalars
// are baked into the programs as constants, not passed as parameters.
//
// The LazyTensor spec asks that running the same program structure again, with new data and new
// values of its scalars, compile nothing new (the scalars are parameters of the cached
// program). In jax-js 0.1.25, `tanh(x) * s + t` on new data with the same `s` and `t` reuses its
// kernels (0 compiles), but each new `s` or `t` compiles one or two new Wasm kernels: a loop
// whose learning rate or step changes every iteration compiles every iteration. Compiles are
// counted with jax-js's own debug log (`setDebug(3)` prints "kernel.exp: ..." for each kernel
// it generates Wasm for, i.e. each miss of its program cache).
//
// Breaks LZ-CACHE-001 (the same structure with new data and new scalar values compiles
// nothing new). NumPy has no compiler: the oracle's answer is 0 compiles after the first run.
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints the compiles of each run; exits 1
// while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

let compiles = 0;
const info = console.info;  // jax-js's debug log: counted, not shown
console.info = (...m) => { if (String(m[0]).startsWith("kernel.exp:")) compiles++; };
jax.setDebug(3);
const data = (k) => np.array(new Float32Array([1, 2, 3, 4, 5, 6].map((v) => v * k)), { shape: [2, 3], dtype: np.float32 });
let bug = false;
for (const [run, k, s, t] of [[1, 1, 2.5, 3.5], [2, 2, 2.5, 3.5], [3, 3, 3.5, 0], [4, 4, 4.5, -1.25]]) {
  const before = compiles;
  np.add(np.multiply(np.tanh(data(k)), s), t).dataSync();
  const n = compiles - before;
  if (run > 1 && n > 0) bug = true;
  console.log(`run ${run}: tanh(x) * ${s} + ${t} on new data: ${n} kernel compile(s)` +
    (run === 1 ? " (first run)" : `; spec: 0${n > 0 ? "   <-- recompiled" : ""}`));
}
jax.setDebug(0);
console.info = info;
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
