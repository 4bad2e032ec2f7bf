// Request/reply over anywidget custom messages, each request with its own timeout, so a busy
// or dead kernel shows a message instead of a table that waits forever.

/**
 * @typedef {{ on: Function, off: Function, send: Function }} MsgModel
 */

/**
 * @param {MsgModel} model
 * @param {{ timeout?: number }} [options]
 */
export function createRpc(model, { timeout = 15000 } = {}) {
  let seq = 0;
  /** @type {Map<string, {resolve: Function, reject: Function, timer: any}>} */
  const pending = new Map();
  /** @param {any} msg */
  const onMessage = (msg) => {
    if (!msg || msg.type !== "rl:reply") return;
    const entry = pending.get(msg.id);
    if (!entry) return; // a reply after its timeout, or for another view of the same model
    pending.delete(msg.id);
    clearTimeout(entry.timer);
    if (msg.error) entry.reject(new Error(String(msg.error)));
    else entry.resolve(msg);
  };
  model.on("msg:custom", onMessage);
  const token = Math.random().toString(36).slice(2, 8);

  return {
    /**
     * @param {string} op
     * @param {Record<string, any>} payload
     * @param {{ timeout?: number }} [opts]
     * @returns {Promise<any>}
     */
    request(op, payload = {}, opts = {}) {
      const id = `${token}-${++seq}`;
      const wait = opts.timeout ?? timeout;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`the kernel did not answer within ${Math.round(wait / 1000)} s (is it busy or stopped?)`));
        }, wait);
        pending.set(id, { resolve, reject, timer });
        model.send({ type: "rl:request", id, op, ...payload });
      });
    },
    get pending() {
      return pending.size;
    },
    dispose() {
      model.off("msg:custom", onMessage);
      for (const entry of pending.values()) {
        clearTimeout(entry.timer);
        entry.reject(new Error("view closed"));
      }
      pending.clear();
    },
  };
}
