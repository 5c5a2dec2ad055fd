// jax-js: a JavaScript number next to an integer array is truncated to the array's integer
// dtype, and `divide(int array, number)` is integer division.
//
// NumPy 2 (NEP 50) and JAX treat a Python float as a weak float: `int32 [3, 5] * 0.5` is
// `[1.5, 2.5]` (float; float32 under jax-js's declared defaults), `int32 [1, 2] == 1.5` is
// `[False, False]`, `where(c, int32 x, 889.72)` is a float array, and true division
// `int32 [3, 5] / 2` is `[1.5, 2.5]`. jax-js 0.1.25 casts the number to int32 first
// (0.5 -> 0, 1.5 -> 1, 889.72 -> 889), so the results are int32 and the values wrong
// (`x * 0.5` is all zeros), and `divide` of an int32 array by a number floors to int32, though
// `divide(int32 array, int32 array)` is a float32 true division.
//
// Breaks LZ-NUM-003 (Python scalars are weak, as in NumPy 2), and LZ-NUM-001 for the values.
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const i32 = (...v) => np.array(new Int32Array(v), { dtype: np.int32 });
const cases = [
  ["int32 [3, 5] * 0.5", () => np.multiply(i32(3, 5), 0.5), "float", [1.5, 2.5]],
  ["int32 [7, -7] + 1.5", () => np.add(i32(7, -7), 1.5), "float", [8.5, -5.5]],
  ["int32 [1, 2] == 1.5", () => np.equal(i32(1, 2), 1.5), "bool", [0, 0]],
  ["where([True, False], int32 [1, 2], 889.75)",
    () => np.where(np.array([true, false]), i32(1, 2), 889.75), "float", [1, 889.75]],
  ["int32 [3, 5] / 2 (divide)", () => np.divide(i32(3, 5), 2), "float", [1.5, 2.5]],
];
let bug = false;
for (const [what, f, kind, want] of cases) {
  const y = f();
  const dtype = y.dtype;
  const got = Array.from(y.dataSync());
  const wrong = JSON.stringify(got) !== JSON.stringify(want) || !dtype.startsWith(kind);
  bug ||= wrong;
  console.log(`${what}: jax-js ${dtype} ${JSON.stringify(got)}; NumPy ${kind} ${JSON.stringify(want)}${wrong ? "   <-- wrong" : ""}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
