/** One ES module for pages with no bundler (the demo page): the client and its browser helpers. */
export * from "../index.js";
export * from "./index.js";
