export default {
  name: "20260101120000_init",
  statements: [
    `CREATE TABLE \`project\` (
	\`id\` text PRIMARY KEY NOT NULL,
	\`worktree\` text NOT NULL,
	\`time_created\` integer NOT NULL
)`,
    `CREATE TABLE \`session\` (
	\`id\` text PRIMARY KEY NOT NULL,
	\`project_id\` text NOT NULL,
	\`title\` text NOT NULL,
	\`time_created\` integer NOT NULL,
	CONSTRAINT \`fk_session_project_id_project_id_fk\` FOREIGN KEY (\`project_id\`) REFERENCES \`project\`(\`id\`) ON DELETE CASCADE
)`,
    `CREATE INDEX \`session_project_id_idx\` ON \`session\` (\`project_id\`)`,
  ],
}
