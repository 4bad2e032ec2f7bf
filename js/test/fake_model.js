// A stand-in for anywidget's model: traits, change events, save_changes and custom messages.
export class FakeModel {
  constructor(state = {}, { onSend } = {}) {
    this.state = { ...state };
    this.handlers = new Map();
    this.sent = [];
    this.saved = 0;
    this.onSend = onSend;
  }
  get(name) {
    return this.state[name];
  }
  set(name, value) {
    this.state[name] = value;
    this.emit(`change:${name}`, value);
  }
  save_changes() {
    this.saved += 1;
  }
  on(event, cb) {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event).add(cb);
  }
  off(event, cb) {
    this.handlers.get(event)?.delete(cb);
  }
  emit(event, ...args) {
    for (const cb of [...(this.handlers.get(event) || [])]) cb(...args);
  }
  send(msg) {
    this.sent.push(msg);
    if (this.onSend) this.onSend(msg, this);
  }
  /** kernel -> browser custom message */
  reply(msg) {
    this.emit("msg:custom", msg, []);
  }
  listenerCount() {
    let n = 0;
    for (const set of this.handlers.values()) n += set.size;
    return n;
  }
}

export const tick = () => new Promise((r) => setTimeout(r, 0));
export const frame = () => new Promise((r) => setTimeout(r, 20));
