import { packageConfig } from "../../tsup.base.ts"

export default packageConfig({ entry: ["src/index.ts", "src/main.ts"] })
