import { createApp } from "./http/app.js";

export { SessionObject } from "./session/session-object.js";

export default createApp();
