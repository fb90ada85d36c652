// What @gradio/client (the JavaScript client Gradio publishes, a pinned dev dependency) lists of a running app:
// prints its view_api() as JSON. Usage: node tests/js/view_api.mjs URL
import { Client } from "@gradio/client";

const app = await Client.connect(process.argv[2]);
process.stdout.write(JSON.stringify(await app.view_api()));
