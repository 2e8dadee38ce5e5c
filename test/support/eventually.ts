/**
 * Polls `read` until `done` holds (up to `ms`, 5 s by default) and returns the last value read:
 * what another instance changed reaches this one by NOTIFY, asynchronously by nature.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean = Boolean,
  ms = 5000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((ok) => setTimeout(ok, 20));
    value = await read();
  }
  return value;
}
