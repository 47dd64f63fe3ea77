//! Graph memcpy nodes made explicitly and their parameter updates: the rows whose host
//! side is a graph node's (kept per node by the call's sequence id, read or checked at
//! each launch of the graph, never when the call returns), and which node an update
//! names. Capture follows an update by replacing the node's host side with the update's;
//! replay gives the update its own host buffer, as for the node's first one.

use super::id;

/// Where a memcpy-node update applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// `cuda/hipGraphMemcpyNodeSetParams[1D](node, ...)`: the node in its graph (later
    /// instantiations see it; executable graphs made before do not).
    Graph { node: usize },
    /// `cuda/hipGraphExecMemcpyNodeSetParams[1D](exec, node, ...)`: the node's copy in one
    /// executable graph.
    Exec { exec: usize, node: usize },
}

/// Whether `row` adds a memcpy node to an explicit graph (its node handle out at
/// argument 0, its graph at argument 1).
pub fn adds_node(row: u16) -> bool {
    matches!(row, id::GraphAddMemcpyNode1D | id::GraphAddMemcpyNode)
}

/// The update `row` makes, with the argument indices of its handles.
pub fn update(row: u16) -> Option<Update> {
    match row {
        id::GraphMemcpyNodeSetParams1D | id::GraphMemcpyNodeSetParams => {
            Some(Update::Graph { node: 0 })
        }
        id::GraphExecMemcpyNodeSetParams1D | id::GraphExecMemcpyNodeSetParams => {
            Some(Update::Exec { exec: 0, node: 1 })
        }
        _ => None,
    }
}

/// Whether `row`'s host side belongs to a graph node rather than to the call.
pub fn node_host_side(row: u16) -> bool {
    adds_node(row) || update(row).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rows_name_their_handles() {
        assert!(adds_node(id::GraphAddMemcpyNode1D) && node_host_side(id::GraphAddMemcpyNode));
        assert_eq!(
            update(id::GraphExecMemcpyNodeSetParams1D),
            Some(Update::Exec { exec: 0, node: 1 })
        );
        assert_eq!(
            update(id::GraphMemcpyNodeSetParams),
            Some(Update::Graph { node: 0 })
        );
        assert!(!node_host_side(id::Memcpy) && update(id::GraphAddMemcpyNode1D).is_none());
        // The handles are where the table says.
        for row in [
            id::GraphMemcpyNodeSetParams1D,
            id::GraphMemcpyNodeSetParams,
            id::GraphExecMemcpyNodeSetParams1D,
            id::GraphExecMemcpyNodeSetParams,
        ] {
            let d = crate::API_TABLE.iter().find(|d| d.id == row).unwrap();
            let (exec, node) = match update(row).unwrap() {
                Update::Graph { node } => (None, node),
                Update::Exec { exec, node } => (Some(exec), node),
            };
            assert_eq!(d.params[node].kind, crate::ParamKind::GraphNode);
            if let Some(e) = exec {
                assert_eq!(d.params[e].kind, crate::ParamKind::GraphExec);
            }
        }
    }
}
