/**
 * The list of vitest projects. Vitest 5 no longer reads this file by itself:
 * the root `vitest.config.ts` imports it into `test.projects`.
 */
export const projects = ["packages/*", "examples/*"]
